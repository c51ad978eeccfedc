"""The shipped learned policy, run with numpy only: ``PretrainedAgent`` (name ``"pretrained"``).

The network is ``majiang_env.training.ppo.PolicyNet`` (a trunk MLP over the ``features``
encoding, a head shared by the 36 kinds, a linear head for the other ids),
trained by ``python -m majiang_env.training.recipe`` and exported with
``majiang_env.training.ppo.export_numpy`` to an ``.npz`` of float32 arrays. This module
re-implements its forward pass in numpy, so playing against it needs no
torch; ``tests/arena/test_pretrained.py`` checks that both forwards agree.

How it was trained, and how strong it is (arena figures with confidence
intervals): docs/performance.md, "Ladder".

**Weights files** (``majiang-policy/1``): an ``.npz`` holding ``format`` (the
string ``"majiang-policy/1"``), the 13 float arrays of ``_KEYS`` with the
shapes of :func:`check_weights` (each hidden width 1..``MAX_HIDDEN`` = 4096,
at most ``MAX_PARAMS`` numbers in all, every value finite in float32) and at
most 64 ``meta_*`` members (a string of at most 1024 characters, or at most
64 numbers). The file is at most ``MAX_FILE_BYTES`` (256 MiB). Everything is
checked when the file is loaded, the sizes from the file's size and the
arrays' headers before any array is read into memory (``allow_pickle=False``
always): a file that cannot be read as such (not a zip, truncated, pickled or
object arrays in any member, a missing or unknown array, a wrong shape, dtype
or a non-finite value, a size past a limit) raises :class:`WeightsError` (a ``ValueError``) naming the
file and the problem; a path with no file raises ``FileNotFoundError``. A
loaded policy never fails later for its weights, and the agent always plays a
legal action, even when the network's logits are extreme (``-inf``, ``nan``
or below the ``-1e9`` of illegal actions).
"""
from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np

from ..engine.checks import as_bool, is_int, show
from ..engine.encodings import FEAT_SIZE, FeatureEncoder
from ..engine.kernel.features import NUM_PLANES
from ..engine.rules import A_EXCHANGE, A_TSUMO, NUM_ACTIONS, NUM_KINDS
from .baselines import split_pass

__all__ = ["NumpyPolicy", "PretrainedAgent", "WeightsError", "check_weights", "DEFAULT_WEIGHTS", "FORMAT",
           "MAX_HIDDEN", "MAX_PARAMS", "MAX_FILE_BYTES"]

DEFAULT_WEIGHTS = Path(__file__).with_name("data") / "pretrained.npz"
FORMAT = "majiang-policy/1"
_KEYS = ("body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias", "ctx.weight", "ctx.bias",
         "kind_in.weight", "kind_in.bias", "kind_out.weight", "kind_out.bias", "kind_bias",
         "pi.weight", "pi.bias")
KIND_OUT = 4                       # per kind: discard, ankan, minkan, exchange
# Limits of a weights file, checked from the file's size and the arrays' headers before
# anything is read into memory:
MAX_HIDDEN = 4096                  # each hidden width H1, H2, C: 1..MAX_HIDDEN
MAX_PARAMS = 2 ** 25               # numbers in all the arrays together (128 MiB as float32)
MAX_FILE_BYTES = 2 ** 28           # the file itself (256 MiB)
MAX_META = 64                      # meta_* members
MAX_META_CHARS = 1024              # a meta_* string; a meta_* number array: at most 64 numbers
OTHER_IDS = A_EXCHANGE - A_TSUMO   # the ids 108-119 of the linear head


class WeightsError(ValueError):
    """Policy weights that are not a valid ``majiang-policy/1`` set (names the file and the problem)."""


def check_weights(weights, where: str = "policy weights") -> dict:
    """The arrays of ``_KEYS`` from ``weights`` (a mapping) as contiguous float32,
    each checked: a real float array (float16/32/64) of the shape below, every
    value finite in float32 (H1, H2, C: the hidden sizes, any positive size);
    else :class:`WeightsError` naming ``where`` and the array.

    ``body.0.weight`` (H1, FEAT_SIZE), ``body.0.bias`` (H1,), ``body.2.weight``
    (H2, H1), ``body.2.bias`` (H2,), ``ctx.weight`` (C, H2), ``ctx.bias`` (C,),
    ``kind_in.weight`` (C, NUM_PLANES), ``kind_in.bias`` (C,), ``kind_out.weight``
    (4, C), ``kind_out.bias`` (4,), ``kind_bias`` (36, 4), ``pi.weight`` (12, H2),
    ``pi.bias`` (12,)."""
    missing = [k for k in _KEYS if k not in weights]
    if missing:
        raise WeightsError(f"{where}: no array {missing[0]!r} (a policy has {list(_KEYS)})")
    w = {}
    for k in _KEYS:
        a = weights[k]
        if not isinstance(a, np.ndarray) or a.dtype.kind != "f" or a.dtype.itemsize > 8:
            raise WeightsError(f"{where}: {k!r} must be a float array, got "
                               f"{a.dtype if isinstance(a, np.ndarray) else type(a).__name__}")
        with np.errstate(over="ignore"):
            a = np.ascontiguousarray(a, np.float32)
        if not np.isfinite(a).all():
            raise WeightsError(f"{where}: {k!r} holds a value that is not finite in float32 (nan, inf or "
                               f"beyond +-3.4e38)")
        w[k] = a
    _check_shapes({k: w[k].shape for k in _KEYS}, where)
    return w


def _check_shapes(shapes: dict, where: str) -> None:
    """The shapes of the 13 arrays (check_weights), from the arrays or from a file's
    headers: each hidden width 1..MAX_HIDDEN, at most MAX_PARAMS numbers in all."""
    def width(k):
        return shapes[k][0] if len(shapes[k]) == 2 else None
    for k, name in (("body.0.weight", "H1"), ("body.2.weight", "H2"), ("ctx.weight", "C")):
        h = width(k)
        if h is not None and not 1 <= h <= MAX_HIDDEN:
            raise WeightsError(f"{where}: {k!r} has shape {tuple(shapes[k])}: hidden width {name} = {h} is "
                               f"not allowed (1..{MAX_HIDDEN})")
    total = sum(int(np.prod(sh, dtype=np.int64)) if all(0 <= d <= 2 ** 40 for d in sh) else 2 ** 62
                for sh in shapes.values())
    if total > MAX_PARAMS:
        raise WeightsError(f"{where}: the arrays hold {total:,} numbers; at most {MAX_PARAMS:,} are allowed")
    h1, h2, c = width("body.0.weight") or 0, width("body.2.weight") or 0, width("ctx.weight") or 0
    want = {"body.0.weight": (h1, FEAT_SIZE), "body.0.bias": (h1,), "body.2.weight": (h2, h1),
            "body.2.bias": (h2,), "ctx.weight": (c, h2), "ctx.bias": (c,), "kind_in.weight": (c, NUM_PLANES),
            "kind_in.bias": (c,), "kind_out.weight": (KIND_OUT, c), "kind_out.bias": (KIND_OUT,),
            "kind_bias": (NUM_KINDS, KIND_OUT), "pi.weight": (OTHER_IDS, h2), "pi.bias": (OTHER_IDS,)}
    names = {"body.0.weight": "H1", "body.2.weight": "H2", "ctx.weight": "C"}
    for k in _KEYS:
        if tuple(shapes[k]) != want[k] or 0 in want[k]:
            unknown = [n for key, n in names.items() if not width(key)]   # widths read from a 2-d shape only
            raise WeightsError(f"{where}: {k!r} has shape {tuple(shapes[k])}; this version needs {want[k]}"
                               + (f" with {', '.join(unknown)} read from 2-d arrays" if unknown else "")
                               + f" (H1 = {h1 or '?'}, H2 = {h2 or '?'}, C = {c or '?'}: hidden widths "
                               f"1..{MAX_HIDDEN}; {FEAT_SIZE} features, {NUM_PLANES} planes)")


def _headers(path: Path, where: str) -> dict:
    """{member name: (shape, dtype)} of an .npz, read from the zip directory and each
    array's .npy header only (nothing is decompressed past the headers), with every
    member checked: only the format's names, no object or structured dtype, sizes
    within the limits."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise WeightsError(f"{where}: not a readable .npz file ({type(e).__name__}: {show(str(e), 200)})") from None
    out = {}
    with zf:
        infos = zf.infolist()
        if len(infos) > len(_KEYS) + 1 + MAX_META:
            raise WeightsError(f"{where}: {len(infos)} members; a policy has at most {len(_KEYS) + 1 + MAX_META}")
        for info in infos:
            if not info.filename.endswith(".npy"):
                raise WeightsError(f"{where}: member {show(info.filename)} is not an .npy array")
            name = info.filename[:-4]
            if name != "format" and name not in _KEYS and not name.startswith("meta_"):
                raise WeightsError(f"{where}: unknown array {name!r} (the format has 'format', "
                                   f"{list(_KEYS)} and meta_* strings)")
            if name in out:
                raise WeightsError(f"{where}: array {name!r} appears twice")
            if info.file_size > 8 * MAX_PARAMS + 4096:
                raise WeightsError(f"{where}: array {name!r} is {info.file_size:,} bytes unpacked, more than "
                                   f"a policy may hold")
            try:
                with zf.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                        np.lib.format.read_array_header_2_0
                    shape, _, dtype = read(f)
            except Exception as e:   # noqa: BLE001 - a damaged member or header
                raise WeightsError(f"{where}: array {name!r} cannot be read ({type(e).__name__}: "
                                   f"{show(str(e), 200)})") from None
            if dtype.hasobject or dtype.fields is not None or dtype.kind not in "biufU":
                raise WeightsError(f"{where}: array {name!r} has dtype {dtype}; a policy holds numbers and "
                                   f"strings only (no object arrays)")
            if name.startswith("meta_"):
                n = int(np.prod(shape, dtype=np.int64))
                ok = (dtype.kind == "U" and shape == () and dtype.itemsize <= 4 * MAX_META_CHARS) or \
                     (dtype.kind in "biuf" and len(shape) <= 1 and n <= 64)
                if not ok:
                    raise WeightsError(f"{where}: {name!r} must be a string of at most {MAX_META_CHARS} "
                                       f"characters or at most 64 numbers, got {dtype} {shape}")
            elif name == "format":
                if dtype.kind != "U" or shape != () or dtype.itemsize > 4 * 64:
                    raise WeightsError(f"{where}: format must be the string {FORMAT!r}, got {dtype} {shape}")
            elif dtype.kind != "f":
                raise WeightsError(f"{where}: {name!r} must be a float array, got {dtype}")
            out[name] = (tuple(shape), dtype)
    return out


def _relu(x):
    return np.maximum(x, 0.0, out=x)


class NumpyPolicy:
    """The policy network's logits in numpy: ``logits(x, legal)`` -> float32 (B, 156),
    illegal actions at -1e9. ``weights``: a mapping of the arrays ``_KEYS`` (torch
    ``state_dict`` names), checked by :func:`check_weights`."""

    def __init__(self, weights, where: str = "policy weights"):
        if not hasattr(weights, "__contains__") or not hasattr(weights, "__getitem__"):
            raise WeightsError(f"{where}: expected a mapping of arrays, got {type(weights).__name__}")
        self.w = check_weights(weights, where)

    @classmethod
    def load(cls, path=DEFAULT_WEIGHTS) -> "NumpyPolicy":
        """The policy of a ``majiang-policy/1`` file (module docstring): everything is
        checked here; WeightsError names the file and the problem."""
        if not isinstance(path, (str, os.PathLike)):
            raise ValueError(f"path must be a str or os.PathLike, got {show(path)} ({type(path).__name__})")
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no policy weights at {path}")
        where = str(path)
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise WeightsError(f"{where}: {size:,} bytes; a policy file is at most {MAX_FILE_BYTES:,}")
        heads = _headers(path, where)
        if all(k in heads for k in _KEYS):       # the sizes, before any array is read
            _check_shapes({k: heads[k][0] for k in _KEYS}, where)
        try:
            z = np.load(path, allow_pickle=False)
        except Exception as e:   # noqa: BLE001 - not a zip or .npy, truncated, pickled ...
            raise WeightsError(f"{where}: not a readable .npz file ({type(e).__name__}: {show(str(e), 200)})") from None
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise WeightsError(f"{where}: not an .npz archive (a single .npy array)")
        with z:
            try:
                names = list(z.files)
                unknown = [k for k in names if k != "format" and k not in _KEYS and not k.startswith("meta_")]
                if unknown:
                    raise WeightsError(f"{where}: unknown array {unknown[0]!r} (the format has 'format', "
                                       f"{list(_KEYS)} and meta_* strings)")
                fmt = z["format"] if "format" in names else None
                if not (isinstance(fmt, np.ndarray) and fmt.shape == () and fmt.dtype.kind == "U"
                        and str(fmt) == FORMAT):
                    raise WeightsError(f"{where}: format {show(None if fmt is None else fmt.tolist())}, "
                                       f"expected {FORMAT!r}")
                arrays = {k: z[k] for k in _KEYS if k in names}
                for k in names:
                    if k.startswith("meta_"):
                        z[k]             # read (bounded by its header): a damaged member fails here
            except WeightsError:
                raise
            except Exception as e:   # noqa: BLE001 - a damaged member: zlib, zip, EOF, pickled arrays ...
                raise WeightsError(f"{where}: an array cannot be read ({type(e).__name__}: "
                                   f"{show(str(e), 200)})") from None
        return cls(arrays, where)

    def logits(self, x, legal) -> np.ndarray:
        w = self.w
        x = np.asarray(x, np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            h = _relu(x @ w["body.0.weight"].T + w["body.0.bias"])
            h = _relu(h @ w["body.2.weight"].T + w["body.2.bias"])
            planes = x[:, :NUM_PLANES * NUM_KINDS].reshape(-1, NUM_PLANES, NUM_KINDS)
            planes = planes.transpose(0, 2, 1)                                               # (B, 36, planes)
            k = _relu(planes @ w["kind_in.weight"].T + w["kind_in.bias"]
                      + (h @ w["ctx.weight"].T + w["ctx.bias"])[:, None, :])
            per_kind = k @ w["kind_out.weight"].T + w["kind_out.bias"] + w["kind_bias"]      # (B, 36, 4)
            out = np.empty((x.shape[0], NUM_ACTIONS), np.float32)
            out[:, :3 * NUM_KINDS] = per_kind[:, :, :3].transpose(0, 2, 1).reshape(-1, 3 * NUM_KINDS)
            out[:, A_TSUMO:A_EXCHANGE] = h @ w["pi.weight"].T + w["pi.bias"]
            out[:, A_EXCHANGE:] = per_kind[:, :, 3]
        out[~np.asarray(legal, bool)] = -1e9
        return out


def best_legal(scores, legal) -> np.ndarray:
    """Per row, the legal action with the highest score (int64 (B,)); a legal action
    always, whatever the scores (``nan`` counts lowest; a row whose legal scores
    are all ``-inf`` or ``nan`` gets its first legal action). Every row of
    ``legal`` (bool (B, 156)) must have a legal action."""
    s = np.where(legal & ~np.isnan(scores), scores, -np.inf)
    best = s.argmax(1)
    none = ~legal[np.arange(len(best)), best]
    if none.any():
        best[none] = legal[none].argmax(1)
    return best


class PretrainedAgent:
    """The shipped policy as an agent: ``agent(obs_dict) -> action`` and, batched,
    ``agent.act_batch(obs, mask)`` (compact observations int16 (B, 436) or
    ``features`` float32 (B, FEAT_SIZE)). It plays the most probable legal
    action (``deterministic=False``: samples with its own seeded generator).
    ``rules``: the rules its compact observations come from (the features
    encoding needs two fields of them). ``path``: other weights of the same
    format (checked when loaded: :class:`WeightsError`).
    """
    obs_type = "compact"      # what faces pass to act_batch (it encodes the features itself)

    def __init__(self, seed=None, rules=None, deterministic=True, path=DEFAULT_WEIGHTS):
        if seed is not None and not is_int(seed):
            raise ValueError(f"seed must be an int or None, got {show(seed)}")
        self.deterministic = as_bool("deterministic", deterministic)
        self.policy = NumpyPolicy.load(path)
        self.encode = FeatureEncoder(rules)
        self.rng = np.random.default_rng(None if seed is None else int(seed) % 2 ** 64)

    def act_batch(self, obs, mask) -> np.ndarray:
        obs, mask = np.asarray(obs), np.asarray(mask)
        if obs.ndim != 2 or mask.shape != (obs.shape[0], NUM_ACTIONS):
            raise ValueError(f"expected obs (B, 436) or (B, {FEAT_SIZE}) and mask (B, {NUM_ACTIONS}), "
                             f"got {obs.shape} and {mask.shape}")
        legal = mask != 0
        if not legal.any(1).all():
            raise ValueError("PretrainedAgent: an action mask has no legal action")
        x = obs.astype(np.float32) if obs.dtype.kind == "f" and obs.shape[1] == FEAT_SIZE else \
            self.encode.batch(obs, mask)
        logits = self.policy.logits(x, legal)
        if not self.deterministic:
            logits = logits - np.log(-np.log(self.rng.random(logits.shape) + 1e-12) + 1e-12)
        return best_legal(logits, legal)

    def __call__(self, obs) -> int:
        if not isinstance(obs, dict) or "observation" not in obs or "action_mask" not in obs:
            raise ValueError("PretrainedAgent: expected an observation dict with 'observation' and 'action_mask'")
        mask, only_pass = split_pass(obs["action_mask"])
        if only_pass:
            return NUM_ACTIONS   # the pass of an agent not to act (PettingZoo faces)
        return int(self.act_batch(np.asarray(obs["observation"])[None], mask[None])[0])
