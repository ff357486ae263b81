"""MXNet 1.x on-disk formats, in NumPy + struct only (no torch here).

``params`` reads and writes the NDArray list file (``mx.nd.save``, ``.params``),
``pickle_safe`` reads and writes optimizer ``.states`` pickles without running code from
the file, and ``symbol_json`` handles the symbol graph JSON.
"""
