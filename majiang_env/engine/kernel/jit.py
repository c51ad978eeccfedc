"""The two compile decorators of the kernel (numba ``njit`` settings).

Kernel functions allocate nothing, so they are compiled without numba's
reference counting (``_nrt=False``): with it, numba updates the count of every
array it got from Python, with an atomic instruction, around each of the small
functions a decision runs through -- about half of a decision's time on one
thread (research/README.md, "The kernel's compiled form"). An allocation in such a
function fails to compile ("NRT required"); the few functions that allocate
(``players.new_workspace``, the parallel loops) use plain ``njit``.
"""
from numba import njit

# Every kernel function: cached on disk, no reference counting.
kernel_jit = njit(cache=True, _nrt=False)
# The small rule functions a decision runs through are inlined into their callers
# by LLVM (``forceinline``), so splitting the rules into one function each costs
# no calls, whichever module of the kernel a function is in. Not for a function
# that holds an agent: numba compiles each function called from compiled code on
# its own and then optimizes it again inside each caller, so forcing a big body
# into its callers multiplies the compile time (the wrappers of ``learner.py``'s
# step took minutes each, research/README.md "Compile time"); they are plain
# calls, once per slot and step.
rule_jit = njit(cache=True, forceinline=True, _nrt=False)
