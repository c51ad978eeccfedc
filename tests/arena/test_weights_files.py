"""Weights files (``majiang-policy/1``): every member is checked, sizes are limited and
checked from the headers before anything is allocated, and the messages say what is
wrong without contradicting themselves."""
import io
import resource
import zipfile

import numpy as np
import pytest

from majiang_env.agents.pretrained import (
    DEFAULT_WEIGHTS,
    MAX_FILE_BYTES,
    MAX_HIDDEN,
    NumpyPolicy,
    PretrainedAgent,
    WeightsError,
)


def shipped():
    with np.load(DEFAULT_WEIGHTS) as z:
        return {k: z[k] for k in z.files}


def write(tmp_path, arrays, name="w.npz"):
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


def test_the_shipped_file_and_a_copy_load(tmp_path):
    NumpyPolicy.load(DEFAULT_WEIGHTS)
    w = shipped()
    PretrainedAgent(path=write(tmp_path, {**w, "meta_note": np.array("a note"), "meta_n": np.arange(3)}))


def test_object_arrays_refused_in_every_member(tmp_path):
    w = shipped()
    for name in ("meta_method", "format", "pi.bias"):
        path = tmp_path / f"{name}.npz"
        np.savez(path, **{**w, name: np.array([{"x": 1}], dtype=object)}, allow_pickle=True)
        with pytest.raises(WeightsError, match="no object arrays"):
            NumpyPolicy.load(path)


def test_extra_member_and_bad_meta_refused(tmp_path):
    w = shipped()
    with pytest.raises(WeightsError, match="unknown array 'extra'"):
        NumpyPolicy.load(write(tmp_path, {**w, "extra": np.zeros(3, np.float32)}))
    with pytest.raises(WeightsError, match="meta_big"):
        NumpyPolicy.load(write(tmp_path, {**w, "meta_big": np.array("x" * 5000)}))
    with pytest.raises(WeightsError, match="meta_many"):
        NumpyPolicy.load(write(tmp_path, {**w, "meta_many": np.zeros(1000)}))
    path = tmp_path / "not_npy.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(WeightsError, match="not an .npy array"):
        NumpyPolicy.load(path)


def _huge_declared(tmp_path):
    """A small file whose header declares body.0.weight of 4096 x 10**6 floats."""
    w = shipped()
    path = tmp_path / "huge.npz"
    np.savez(path, **{k: v for k, v in w.items() if k != "body.0.weight"})
    buf = io.BytesIO()
    header = {"descr": "<f4", "fortran_order": False, "shape": (4096, 10 ** 6)}
    np.lib.format.write_array_header_1_0(buf, header)
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("body.0.weight.npy", buf.getvalue() + b"\0" * 1024)
    return path


def test_a_huge_declared_shape_is_refused_before_allocating(tmp_path):
    path = _huge_declared(tmp_path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(WeightsError, match="numbers; at most|not allowed"):
        NumpyPolicy.load(path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000   # kB: nothing big was made
    w = shipped()
    wide = {**w, "body.0.weight": np.zeros((MAX_HIDDEN + 1, 1), np.float32)}
    with pytest.raises(WeightsError, match=f"hidden width H1 = {MAX_HIDDEN + 1} is not allowed"):
        NumpyPolicy.load(write(tmp_path, wide, "wide.npz"))


def test_a_file_past_the_size_limit_is_refused(tmp_path, monkeypatch):
    import majiang_env.agents.pretrained as P
    monkeypatch.setattr(P, "MAX_FILE_BYTES", 1000)
    with pytest.raises(WeightsError, match="bytes; a policy file is at most 1,000"):
        NumpyPolicy.load(DEFAULT_WEIGHTS)
    assert MAX_FILE_BYTES >= 2 ** 20


def test_zero_hidden_width_says_so(tmp_path):
    w = shipped()
    zero = {**w, "body.0.weight": np.zeros((0, w["body.0.weight"].shape[1]), np.float32),
            "body.0.bias": np.zeros(0, np.float32)}
    with pytest.raises(WeightsError) as e:
        NumpyPolicy.load(write(tmp_path, zero))
    msg = str(e.value)
    assert "hidden width H1 = 0 is not allowed" in msg
    assert "this version needs" not in msg
    bad = {**w, "body.2.bias": np.zeros(7, np.float32)}
    with pytest.raises(WeightsError) as e:
        NumpyPolicy.load(write(tmp_path, bad, "bad.npz"))
    msg = str(e.value)          # the shape given differs from the shape needed
    have, need = msg.split("has shape ")[1].split("; this version needs ")
    assert have != need.split(" ")[0]
