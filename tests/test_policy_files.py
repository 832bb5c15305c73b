"""Policy files (``agents.ppo.load_policy``) checked as documented: float64 weights past float32, a deeply nested
meta, too many or unexpected entries are each refused in one line."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.ppo import load_policy, save_policy


def _policy(tmp_path: Path) -> Path:
    return save_policy(tmp_path / "p.npz", load_policy(agents.ppo.SHIPPED_MODEL))


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


def test_float64_weights_past_float32_are_refused(tmp_path: Path) -> None:
    path = _policy(tmp_path)
    arrays = _arrays(path)
    weight = arrays["action.weight"].astype(np.float64)
    weight[0, 0] = 1e300  # finite as float64, infinite as float32
    np.savez(path, **{**arrays, "action.weight": weight})
    with pytest.raises(ValueError, match="action holds non-finite numbers"):
        load_policy(path)


@pytest.mark.parametrize("depth", [50, 100_000])
def test_a_deeply_nested_meta_is_a_one_line_value_error(tmp_path: Path, depth: int) -> None:
    path = _policy(tmp_path)
    arrays = _arrays(path)
    meta = json.loads(str(arrays["meta"]))
    meta["provenance"] = json.loads("[" * min(depth, 500) + "]" * min(depth, 500)) if depth < 1000 else None
    text = json.dumps(meta)
    if depth >= 1000:  # past Python's parser: made as text
        text = text.replace('"provenance": null', '"provenance": ' + "[" * depth + "]" * depth)
    np.savez(path, **{**arrays, "meta": np.array(text)})
    with pytest.raises(ValueError) as err:
        load_policy(path)
    assert "meta" in str(err.value) and "\n" not in str(err.value)


def test_a_file_of_many_entries_is_refused_early_and_briefly(tmp_path: Path) -> None:
    path = tmp_path / "many.npz"
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, np.float32))
    with zipfile.ZipFile(path, "w") as archive:
        for k in range(20_000):
            with archive.open(f"x{k}.npy", "w") as f:
                np.lib.format.write_array_header_1_0(f, header)
                f.write(np.zeros(1, np.float32).tobytes())
    started = time.process_time()
    with pytest.raises(ValueError) as err:
        load_policy(path)
    assert "20,000 entries" in str(err.value) and len(str(err.value)) < 300
    assert time.process_time() - started < 5  # the refusal reads the archive's directory, no entry


def test_unexpected_entries_are_listed_briefly(tmp_path: Path) -> None:
    path = _policy(tmp_path)
    np.savez(path, **_arrays(path), **{f"extra{k}": np.zeros(1, np.float32) for k in range(50)})
    with pytest.raises(ValueError, match=r"unexpected entries \[.*\] and 45 more") as err:
        load_policy(path)
    assert len(str(err.value)) < 300
