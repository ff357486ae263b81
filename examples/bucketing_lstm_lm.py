"""BucketingModule: a word-level LSTM language model on the short text shipped in
examples/data/village.txt, with sentences grouped into length buckets (one unrolled graph
per bucket, all sharing one set of weights) — MXNet's example/rnn/bucketing, on mxtorch.

    python examples/bucketing_lstm_lm.py [--epochs 10] [--num-hidden 32]

Prints the training and held-out perplexities; a model that learned nothing scores about
the size of the vocabulary (~180). The text is tiny, so the model soon memorizes it: the
training perplexity keeps falling while the held-out one stalls near 120.
"""
import argparse
import logging
import os

import numpy as np

import mxtorch as mx  # with real MXNet: import mxnet as mx
import mxtorch.rnn  # noqa: F401  (mx.rnn; a no-op where mxtorch already imports it)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "village.txt")
BUCKETS = [8, 12, 16]
INVALID = 0  # label 0 pads the sentences; real words start at 1


def read_sentences(path):
    with open(path, encoding="utf-8") as f:
        return [line.split() for line in f if line.strip()]


def make_sym_gen(vocab_size, num_embed, num_hidden, num_layers, batch_size):
    """Return sym_gen(seq_len) -> (symbol, data_names, label_names) for BucketingModule."""

    def zero_state(name, shape, **kwargs):
        # BucketSentenceIter yields full batches only, so the begin states can carry the
        # batch size instead of MXNet's 0 ("infer me") placeholder.
        return mx.sym.zeros(shape=(batch_size,) + tuple(shape[1:]), name=name)

    stack = mx.rnn.SequentialRNNCell()
    for i in range(num_layers):
        stack.add(mx.rnn.LSTMCell(num_hidden=num_hidden, prefix="lstm_l%d_" % i))

    def sym_gen(seq_len):
        data = mx.sym.Variable("data")
        label = mx.sym.Variable("softmax_label")
        embed = mx.sym.Embedding(data, input_dim=vocab_size, output_dim=num_embed,
                                 name="embed")
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True,
                                  begin_state=stack.begin_state(func=zero_state))
        pred = mx.sym.Reshape(outputs, shape=(-1, num_hidden))
        pred = mx.sym.FullyConnected(pred, num_hidden=vocab_size, name="pred")
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(pred, label, name="softmax",
                                    use_ignore=True, ignore_label=INVALID)
        return pred, ("data",), ("softmax_label",)

    return sym_gen


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--num-hidden", type=int, default=32)
    parser.add_argument("--num-embed", type=int, default=16)
    parser.add_argument("--num-layers", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    mx.random.seed(3)
    np.random.seed(3)

    sentences = read_sentences(DATA)
    train_sents = [s for i, s in enumerate(sentences) if i % 5 != 4]
    val_sents = [s for i, s in enumerate(sentences) if i % 5 == 4]
    train_ids, vocab = mx.rnn.encode_sentences(train_sents, invalid_label=INVALID,
                                               start_label=1)
    val_ids, vocab = mx.rnn.encode_sentences(val_sents, vocab=vocab, invalid_label=INVALID,
                                             start_label=1, unknown_token="the")
    vocab_size = len(vocab) + 1
    print("%d training / %d validation sentences, vocabulary of %d words"
          % (len(train_ids), len(val_ids), vocab_size))
    train_iter = mx.rnn.BucketSentenceIter(train_ids, args.batch_size, buckets=BUCKETS,
                                           invalid_label=INVALID)
    val_iter = mx.rnn.BucketSentenceIter(val_ids, args.batch_size, buckets=BUCKETS,
                                         invalid_label=INVALID)

    model = mx.mod.BucketingModule(
        sym_gen=make_sym_gen(vocab_size, args.num_embed, args.num_hidden, args.num_layers,
                             args.batch_size),
        default_bucket_key=train_iter.default_bucket_key, context=mx.cpu())
    model.fit(train_iter, eval_data=val_iter,
              eval_metric=mx.metric.Perplexity(INVALID),
              optimizer="adam", optimizer_params={"learning_rate": 0.01},
              initializer=mx.init.Xavier(factor_type="in", magnitude=2.34),
              num_epoch=args.epochs)
    (_, train_ppl), = model.score(train_iter, mx.metric.Perplexity(INVALID))
    (_, val_ppl), = model.score(val_iter, mx.metric.Perplexity(INVALID))
    print("vocabulary-size=%d" % vocab_size)
    print("final-train-perplexity=%.2f" % train_ppl)
    print("final-perplexity=%.2f" % val_ppl)


if __name__ == "__main__":
    main()
