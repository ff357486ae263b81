"""``mx.kv`` / ``mx.kvstore``: key-value stores for parameter synchronization."""
from .kvstore import KVStore
from .base import KVStoreBase, TestStore, create

__all__ = ["KVStore", "KVStoreBase", "TestStore", "create"]
