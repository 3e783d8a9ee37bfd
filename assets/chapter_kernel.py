"""One Jupyter kernel for the chapters a process executes one after another.

Starting a kernel and importing what a chapter imports (polars, duckdb, altair and its JSON schema,
vl-convert, :mod:`analysis`) costs about 3.5 CPU s; the chapters then run in well under a second each. A
:class:`ChapterKernel` starts one kernel on first use and gives each notebook a clean namespace in it
(IPython's ``%reset -f`` — the imported modules stay loaded — and the notebook's own ``VARCAP_*``
variables), so ``varcap run`` renders its thirteen chapters for one start instead of thirteen. A kernel
that died or timed out is shut down and the next notebook starts a fresh one. The Dagster resource
(:class:`assets.resources.ChapterKernelResource`) holds one per run and shuts it down at the run's end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

#: the cell's tag: executed first in a reused kernel, left out of the page (:func:`reset_source`)
RESET_TAG = "kernel-reset"

#: the variables a notebook's environment sets that may differ from one chapter to the next
#: (:func:`assets.reports.execute_notebook`); the reset cell sets or removes each
PER_NOTEBOOK_ENV = ("VARCAP_WAREHOUSE", "VARCAP_STUDY_RESULTS", "VARCAP_STATIC_CHARTS")


def reset_source(env: dict[str, str]) -> str:
    """The first cell of a notebook executed in a reused kernel: an empty namespace and the notebook's
    own values of :data:`PER_NOTEBOOK_ENV` (set when ``env`` has them, else removed)."""
    sets = {k: env[k] for k in PER_NOTEBOOK_ENV if k in env}
    drops = [k for k in PER_NOTEBOOK_ENV if k not in env]
    return (
        "# injected by the report asset: a clean namespace in the reused kernel\n"
        # %reset -f without its second full gc.collect (the shell's reset already collects once)
        "get_ipython().reset(new_session=False)\n"
        "import os as _varcap_os\n"
        f"_varcap_os.environ.update({sets!r})\n"
        f"for _k in {drops!r}:\n"
        "    _varcap_os.environ.pop(_k, None)\n"
        "del _varcap_os" + (", _k" if drops else "") + "\n"
    )


class ChapterKernel:
    """A ``python3`` Jupyter kernel over local (ipc) sockets, started on first :meth:`client`, reused by
    every later notebook until :meth:`shutdown` (after which the next :meth:`client` starts one)."""

    def __init__(self) -> None:
        self._km: Any = None
        self._kc: Any = None
        self._sockets: Path | None = None
        self._pid = os.getpid()

    @property
    def started(self) -> bool:
        return self._km is not None

    def _config(self, sockets: Path):
        from traitlets.config import Config

        # local sockets (absolute paths: the kernel runs in the notebook's folder): no "running over TCP
        # without encryption" warning
        c = Config()
        c.KernelManager.transport = "ipc"
        c.KernelManager.ip = str(sockets / "k")
        return c

    def client(self, nb: Any, timeout_s: int, cwd: Path, env: dict[str, str]):
        """A ``NotebookClient`` for ``nb`` on the shared kernel (started now, in ``cwd`` with ``env``, if
        there is none); its ``execute()`` leaves the kernel running."""
        from nbclient import NotebookClient

        if self._km is None:
            self._sockets = Path(tempfile.mkdtemp(prefix="varcap-kernel-"))
            starter = NotebookClient(
                nb,
                timeout=timeout_s,
                kernel_name="python3",
                resources={"metadata": {"path": str(cwd)}},
                config=self._config(self._sockets),
            )
            starter.km = starter.create_kernel_manager()
            starter.start_new_kernel(env=env)
            starter.start_new_kernel_client()
            self._km, self._kc = starter.km, starter.kc
        client = NotebookClient(
            nb,
            km=self._km,
            timeout=timeout_s,
            kernel_name="python3",
            resources={"metadata": {"path": str(cwd)}},
        )
        client.kc = self._kc
        return client

    def shutdown(self) -> None:
        """Stop the kernel and remove its sockets; a no-op when none runs."""
        km, kc, sockets = self._km, self._kc, self._sockets
        self._km = self._kc = self._sockets = None
        try:
            if kc is not None:
                kc.stop_channels()
            if km is not None:
                from jupyter_core.utils import run_sync

                run_sync(km.shutdown_kernel)(now=True)
        except Exception:  # a kernel already gone: nothing left to stop
            pass
        finally:
            if sockets is not None:
                shutil.rmtree(sockets, ignore_errors=True)

    def __del__(self) -> None:  # a process that forgot to shut it down does not leave a kernel behind
        if self._km is not None and os.getpid() == self._pid:
            self.shutdown()
