"""The arrays of a policy file (``agents.ppo.load_policy``): a weight of the wrong dtype, an array header that
claims more than the file holds, and a file past ``MAX_POLICY_BYTES`` are each refused in one line."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
from agents.ppo import load_policy, save_policy
from train import cli


def _policy(tmp_path: Path) -> Path:
    return save_policy(tmp_path / "p.npz", load_policy(agents.ppo.SHIPPED_MODEL))


def _rewrite(path: Path, **changes: Any) -> None:
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    np.savez(path, **{**arrays, **changes})


def test_policy_weights_of_a_wrong_dtype_are_a_value_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _policy(tmp_path)
    with np.load(path) as data:
        weight = data["action.weight"]
    for bad in (weight.astype(np.int32), weight.astype(str), weight.astype(np.complex64), weight > 0):
        _rewrite(path, **{"action.weight": bad})
        with pytest.raises(ValueError, match="action has weight of dtype"):
            load_policy(path)
    assert (
        cli.main(
            ["eval", "--candidate", f"ppo:{path}", "--deals", "1", "--no-progress", "--out", str(tmp_path / "out")]
        )
        == 2
    )
    assert "floating-point" in capsys.readouterr().err


def test_a_tiny_policy_file_claiming_a_huge_array_is_refused_before_allocating(tmp_path: Path) -> None:
    path = tmp_path / "forged.npz"
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (2**40, 2**10)})
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("layers.0.weight.npy", header.getvalue())  # the header (magic included), no data
    assert path.stat().st_size < 1000
    with pytest.raises(ValueError, match="claims .* but holds 0 bytes"):
        load_policy(path)


def test_policy_files_larger_than_the_cap_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _policy(tmp_path)
    monkeypatch.setattr(agents.ppo, "MAX_POLICY_BYTES", 10_000)
    with pytest.raises(ValueError, match="MAX_POLICY_BYTES"):
        load_policy(path)
