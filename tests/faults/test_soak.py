"""The short soak (`make test`): ~45 s of `python -m tests.faults.soak` — random instances × policies ×
change periods through `varcap simulate` (some killed with SIGKILL), and a hostile server on 127.0.0.1 for
the downloads. The 10-minute version with `varcap run`/`varcap sweep` kills: `python -m tests.faults.soak
--minutes 10 --seed N`."""

from __future__ import annotations

from pathlib import Path

from tests.faults.soak import soak


def test_short_soak_finds_nothing(tmp_path: Path) -> None:
    lines: list[str] = []
    s = soak(45.0, seed=26, home=tmp_path / "home", phases=("sim", "download"), say=lines.append)
    assert not s.failures, "\n".join(lines)
    assert s.counts["sims"] >= 1 and s.counts["downloads"] >= 1, s.counts
    assert s.counts["downloads_refused"] + s.counts["downloads_ok"] == s.counts["downloads"], s.counts
