"""The caller's OpenMP thread count (which torch's CPU build shares) is the same
after the batched faces run their parallel kernels."""
import ctypes

import numpy as np
import pytest

from majiang_env import SeatVectorEnv, VectorGame, selfplay


@pytest.fixture
def libgomp():
    try:
        lib = ctypes.CDLL("libgomp.so.1")
    except OSError:
        pytest.skip("no GNU OpenMP runtime here")
    before = lib.omp_get_max_threads()
    yield lib
    lib.omp_set_num_threads(before)


@pytest.mark.parametrize("num_threads", [None, 2])
def test_batched_faces_keep_the_callers_openmp_thread_count(libgomp, num_threads):
    libgomp.omp_set_num_threads(1)
    env = SeatVectorEnv(64, opponents="random", num_threads=num_threads)
    env.reset(seed=0)
    env.step(env.action_masks().argmax(axis=1))
    env.sample_actions(np.zeros((64, 156)))
    assert libgomp.omp_get_max_threads() == 1
    vg = VectorGame(64, num_threads=num_threads)
    vg.reset()
    vg.sample_step(np.zeros((64, 156)))
    selfplay(64, num_envs=64, num_threads=num_threads)
    assert libgomp.omp_get_max_threads() == 1
