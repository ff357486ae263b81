"""A dist worker that exits with status 3 on rank 1 while rank 0 waits (launcher test)."""
import sys
import time

import mxtorch as mx

kv = mx.kv.create("dist_sync")
if kv.rank == 1:
    sys.exit(3)
time.sleep(120)  # the launcher must stop this worker long before
