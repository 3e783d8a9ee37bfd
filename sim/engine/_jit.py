"""Lazy compilation of the engine: its functions are plain Python until the compiled engine is asked for.

Every engine function is marked with :func:`kernel_fn` and stays a plain Python function in its module, so
``import sim.engine`` does not import numba. :func:`compiled` imports numba once, wraps every marked
function in ``njit(cache=True)`` over a copy of its module's namespace in which the engine functions are the
compiled ones, so the compiled kernel calls compiled phase functions while the modules keep the plain
functions (:func:`plain`): the very same code run by the interpreter, the engine of small instances.

numba's on-disk cache checks only the source file of the function it loads, not the files of the functions
it calls; :func:`stamp_cache` (the one cache stamp of every compiled loop) keeps a hash of every source
compiled in beside numba's cache files and deletes them when it changes. numba also loads a cache file's
machine code unchecked (a damaged one aborts the process): every compiled function is made by
:func:`cached_njit`, whose cache files carry checksums checked before numba loads them.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import sys
import types
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

ENGINE_DIR = Path(__file__).resolve().parent
MODULES = ("kit", "trees", "queue", "log", "admission", "kernel", "ff")
_PLAIN: dict[str, Callable[..., Any]] = {}
_INLINE: set[str] = set()
_UNCOUNTED: set[str] = set()
_ENTRIES: set[str] = set()
_COMPILED: dict[str, Any] = {}
_NUMBA_SUFFIXES = (".nbi", ".nbc")
_SUM = ".sha256"  # the checksum beside a cache file


def kernel_fn(
    fn: Callable[..., Any] | None = None, *, inline: bool = False, counted: bool = True, entry: bool = False
) -> Any:
    """Mark ``fn`` as part of the compiled engine (compiled by :func:`compiled`); returns it unchanged.
    ``entry=True``: Python calls its compiled version (:func:`cached_njit`'s ``entry``).
    ``inline=True``: numba inlines it into its callers (per-job helpers that take the state bundles, whose
    call would otherwise cost a reference-count update per array). ``counted=False``: compiled without
    numba's reference counting (``_nrt=False``): a call then costs no atomic count per array it takes, which
    numba otherwise adds at entry and exit of any function whose control flow its pruning cannot follow
    (loops, early returns). Only for a function that allocates no array and returns none (numba refuses to
    compile one that allocates; one that returned an array would hand its caller an uncounted
    reference)."""
    if inline and not counted:
        raise ValueError("an inlined engine function takes its caller's reference counting")

    def mark(f: Callable[..., Any]) -> Callable[..., Any]:
        if f.__name__ in _PLAIN:
            raise ValueError(f"engine function {f.__name__} defined twice")
        _PLAIN[f.__name__] = f
        if inline:
            _INLINE.add(f.__name__)
        if not counted:
            _UNCOUNTED.add(f.__name__)
        if entry:
            _ENTRIES.add(f.__name__)
        return f

    return mark if fn is None else mark(fn)


def plain(name: str) -> Callable[..., Any]:
    """The interpreted version of engine function ``name``."""
    _load_modules()
    return _PLAIN[name]


def _load_modules() -> list[Any]:
    import importlib

    return [importlib.import_module(f"sim.engine.{m}") for m in MODULES]


def sources_hash() -> str:
    """sha256 over the engine's source files (what a compiled kernel was built from)."""
    return _files_hash(ENGINE_DIR / f"{m}.py" for m in MODULES)


def _files_hash(paths: Iterable[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()


def cache_dir(src_dir: Path) -> Path:
    """Where numba keeps the cache files of the functions defined in ``src_dir``: under
    ``$NUMBA_CACHE_DIR`` if set (numba then uses only that), else ``src_dir/__pycache__``."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        # numba's own sub-directory name for a source directory (numba.core.caching._CacheLocator)
        sub = f"{src_dir.name}_{hashlib.sha1(str(src_dir).encode()).hexdigest()}"  # noqa: S324
        return Path(env) / sub
    return src_dir / "__pycache__"


def cache_dirs() -> list[Path]:
    """Where numba keeps the engine's cache files (:func:`cache_dir` of the engine's sources)."""
    return [cache_dir(ENGINE_DIR)]


def _is_cache_file(f: Path, stems: Collection[str]) -> bool:
    """Whether ``f`` is a numba cache file (index ``.nbi``, data ``.nbc``) of a module in ``stems``, or the
    checksum written beside one."""
    if f.name.split(".")[0] not in stems:
        return False
    return f.suffix in _NUMBA_SUFFIXES or (f.suffix == _SUM and Path(f.stem).suffix in _NUMBA_SUFFIXES)


def _delete_cache_files(d: Path, stems: Collection[str] = MODULES) -> int:
    """Delete the numba cache files (and their checksums) of the modules ``stems`` in ``d``; return how many."""
    n = 0
    if d.is_dir():
        for f in d.iterdir():
            if _is_cache_file(f, stems):
                f.unlink(missing_ok=True)
                n += 1
    return n


def stamp_cache(d: Path, stems: Collection[str], digest: str, name: str) -> None:
    """The cache stamp of every compiled loop: delete the numba cache files of the modules ``stems`` in
    cache directory ``d`` unless its stamp ``varcap_<name>.sha256`` holds ``digest`` (the hash of every
    source compiled into them: numba's own check reads only the file a function is defined in), then stamp.

    The stamp is written even when the directory does not exist yet (it is created): numba creates it
    when it first saves, so a stamp written only into an existing directory was skipped in a fresh
    checkout whenever Python writes no bytecode (``PYTHONDONTWRITEBYTECODE=1``, ``python -B``: no
    ``__pycache__`` before numba's), and the next process deleted the freshly compiled code as stale."""
    stamp = d / f"varcap_{name}.sha256"
    with contextlib.suppress(OSError):
        if stamp.read_text() == digest:
            return
    _delete_cache_files(d, stems)
    with contextlib.suppress(OSError):  # a read-only tree: numba caches elsewhere, nothing to stamp
        d.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)


def stamp_loop_cache(module_file: str, name: str, *extra: Path) -> None:
    """:func:`stamp_cache` for a compiled loop defined in ``module_file`` outside the engine: its cache
    holds the engine functions it calls (the kit, the trees) compiled in, so its digest covers the
    module, ``extra`` sources and every engine source."""
    here = Path(module_file).resolve()
    digest = _files_hash([here, *extra, *(ENGINE_DIR / f"{m}.py" for m in MODULES)])
    stamp_cache(cache_dir(here.parent), (here.stem,), digest, name)


def _invalidate_stale_cache() -> None:
    """The engine's :func:`stamp_cache` (before numba writes into its cache directories)."""
    digest = sources_hash()
    for d in cache_dirs():
        stamp_cache(d, MODULES, digest, "engine")


def discard_cache() -> int:
    """Delete every engine cache file (e.g. one that no longer loads) and forget this process's compiled
    functions, so the next :func:`compiled` compiles afresh; return how many files were deleted."""
    _COMPILED.clear()
    return sum(_delete_cache_files(d) for d in cache_dirs())


# ------------------------------------------------------------------------------- checked cache files
# numba loads a cache file's machine code without checking it: a damaged ``.nbc`` aborts the process in an
# LLVM assertion (SIGABRT) before any Python code can repair it. Every compiled function of the simulator is
# made by :func:`cached_njit`, whose cache writes a sha256 beside each file numba saves (``<file>.sha256``)
# and, before numba loads a function's files, checks them: a file without its checksum or not matching it
# is deleted (an index with all its data files), numba compiles that function again and saves it afresh,
# and one line on stderr says so.
_VERIFIED: dict[str, tuple[int, int]] = {}  # path -> (size, mtime_ns) of files checked in this process
_TOLD: list[bool] = []
_CHECKED_CACHE: list[type] = []


def _sha256(f: Path) -> str:
    return hashlib.sha256(f.read_bytes()).hexdigest()


def _stat_key(f: Path) -> tuple[int, int]:
    st = f.stat()
    return st.st_size, st.st_mtime_ns


def _record(f: Path) -> None:
    """Write ``f``'s checksum beside it (atomically), remembered as checked."""
    with contextlib.suppress(OSError):
        tmp = f.with_name(f"{f.name}{_SUM}.tmp.{os.getpid()}")
        tmp.write_text(_sha256(f))
        os.replace(tmp, f.with_name(f.name + _SUM))
        _VERIFIED[str(f)] = _stat_key(f)


def _intact(f: Path) -> bool:
    """Whether ``f`` matches the checksum beside it (checked once a process while unchanged)."""
    try:
        key = _stat_key(f)
        if _VERIFIED.get(str(f)) == key:
            return True
        ok = f.with_name(f.name + _SUM).read_text() == _sha256(f)
    except OSError:
        return False
    if ok:
        _VERIFIED[str(f)] = key
    return ok


def _check_function_files(index: Path) -> None:
    """Delete a function's numba cache files (index ``index`` and its ``.nbc`` data files) that do not
    match their checksums: all of them if the index does not."""
    if not index.exists():
        return
    base = index.name[: -len(".nbi")]
    data = sorted(index.parent.glob(f"{glob.escape(base)}.*.nbc"))
    bad = [index, *data] if not _intact(index) else [f for f in data if not _intact(f)]
    for f in bad:
        for g in (f, f.with_name(f.name + _SUM)):
            with contextlib.suppress(OSError):
                g.unlink()
        _VERIFIED.pop(str(f), None)
    if bad and not _TOLD:
        _TOLD.append(True)
        print(
            f"varcap: numba cache file {bad[0].name} in {index.parent} does not match its checksum (damaged, "
            "or written without one); deleted, compiling again",
            file=sys.stderr,
        )


def _checked_cache_class(linked: bool = False) -> type:
    """numba's per-function cache with the checks above (made once numba is imported); ``linked``: for a
    function compiled without Python's wrappers (:func:`cached_njit`), its files named apart
    (``<module>.<function>@linked-<line>…``) so that its twin with the wrappers never loads them."""
    if _CHECKED_CACHE:
        return _CHECKED_CACHE[1 if linked else 0]
    from numba.core.caching import FunctionCache, IndexDataCacheFile

    class CheckedCache(FunctionCache):  # type: ignore[misc]
        """numba's function cache that checks its files before loading them and records what it saves."""

        def load_overload(self, sig: Any, target_context: Any) -> Any:
            _check_function_files(Path(self._cache_file._index_path))
            return super().load_overload(sig, target_context)

        def save_overload(self, sig: Any, data: Any) -> None:
            super().save_overload(sig, data)
            index = Path(self._cache_file._index_path)
            if not index.exists():
                return
            with contextlib.suppress(Exception):
                name = self._cache_file._load_index().get(self._index_key(sig, data.codegen))
                if name is not None:
                    _record(index.parent / name)
            _record(index)

    class LinkedCache(CheckedCache):
        """:class:`CheckedCache` in files of their own."""

        def __init__(self, py_func: Any) -> None:
            super().__init__(py_func)
            base = self._impl.filename_base.replace("-", "@linked-", 1)
            self._cache_file = IndexDataCacheFile(
                cache_path=self._cache_path,
                filename_base=base,
                source_stamp=self._impl.locator.get_source_stamp(),
            )

    _CHECKED_CACHE.extend((CheckedCache, LinkedCache))
    return LinkedCache if linked else CheckedCache


def cache_index(disp: Any) -> dict[Any, str]:
    """The entries of numba's on-disk cache index for dispatcher ``disp`` compiled from its current source
    (signature → data file), its files checked first (above); AttributeError if numba keeps no such index."""
    cache_file = disp._cache._cache_file
    _check_function_files(Path(cache_file._index_path))
    return cache_file._load_index()


def _unliteral_first(disp: Any) -> None:
    """Make numba type a compiled call to ``disp`` with plain argument types first (``int64``, not
    ``Literal[int](0)``), the literal ones only if that fails to compile.

    numba compiles a callee once per distinct argument-type tuple, and a call from compiled code types a
    constant argument (``heap_push(ht, hx, hn, t, j, 0, 0, 0)``, ``_q_compact(qjob, qt, 0, 0, …)``) as a
    literal: every combination of constants at call sites was a full compile of the callee and all it
    inlines (heap_push 8 times, _terminate 4). The machine code is the same arithmetic on the same values
    (a literal argument is passed like any other), so decisions do not change."""
    from numba.core import errors, types

    orig = disp.get_call_template

    def get_call_template(args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        plain_args = tuple(types.unliteral(a) for a in args)
        plain_kws = {k: types.unliteral(v) for k, v in kws.items()}
        if plain_args != tuple(args) or plain_kws != kws:
            try:
                return orig(plain_args, plain_kws)
            except errors.TypingError:
                pass  # needs a literal (e.g. an index into a heterogeneous tuple): numba's own way
        return orig(args, kws)

    disp.get_call_template = get_call_template


_FLAGS_PATCHED: list[bool] = []


def _quick_flag_compare() -> None:
    """Make numba's comparison of two sets of compile options (``TargetConfig``) cheap, with the same results.

    numba looks up every overload it types in a cache keyed by the compile options in force; the key's
    hash and equality read every option (about 40 property reads into a new dict) each time, and the
    options' hash covers only their names, so a lookup compares with every entry of the same types (most
    compare unequal: 41,194 of 55,883 in a cold warm-up of First-Fit). That was 8.2 % of a cold ``varcap
    warm`` (py-spy, 2026-12-04). Here the hash is the same value computed once per class (the sorted option
    names, as numba's) and equality compares the options set over each class's defaults: the dict
    numba's ``values()`` builds, since each option's getter is ``_values.get(name, default)`` (checked
    here; a class whose options are read otherwise keeps numba's comparison). The same answers, so the
    same cache entries and the same machine code (158 cache files of the same total size, to the bytes of
    the source paths). A cold ``varcap warm``, two pairs side by side on 2 cores, 2026-12-04: 138.7 →
    133.8 with the first cut (``_values`` compared when equal only) and 140.7 → 132.1 CPU s with this one."""
    if _FLAGS_PATCHED:
        return
    from numba.core.targetconfig import TargetConfig

    orig_eq = TargetConfig.__eq__
    hashes: dict[type, int] = {}
    defaults: dict[type, dict[str, Any] | None] = {}

    def plain_getters(cls: type) -> dict[str, Any] | None:
        for k in cls.options:  # type: ignore[attr-defined]
            prop = getattr(cls, k, None)
            if not isinstance(prop, property) or not prop.fget.__qualname__.endswith(
                "make_prop.<locals>.getter"
            ):
                return None
        return {k: o.default for k, o in cls.options.items()}  # type: ignore[attr-defined]

    def __hash__(self: Any) -> int:
        h = hashes.get(type(self))
        if h is None:
            h = hashes[type(self)] = hash(tuple(sorted(self.options)))
        return h

    def __eq__(self: Any, other: Any) -> Any:
        cls = type(self)
        if type(other) is cls:
            if self._values == other._values:
                return True
            d = defaults[cls] if cls in defaults else defaults.setdefault(cls, plain_getters(cls))
            if d is not None:
                return {**d, **self._values} == {**d, **other._values}
        return orig_eq(self, other)

    TargetConfig.__hash__ = __hash__  # type: ignore[method-assign,assignment]
    TargetConfig.__eq__ = __eq__  # type: ignore[method-assign,assignment]
    _FLAGS_PATCHED.append(True)


_OVERLOADS_LINKED: list[bool] = []


def _link_only_overloads() -> None:
    """Compile numba's ``@overload`` implementations (``np.empty``, ``np.sort``'s quicksort, ``np.unique``,
    …) as the simulator's functions that Python never calls are (:func:`_linked_compiler`): numba compiles
    each into a code library of its own, optimizes that library as a whole module and emits its machine
    code, although its only callers link its IR into their own modules and never run that code (an
    overload has no Python wrapper: ``no_cpython_wrapper``, numba's default for them). Here such an
    overload's library skips the whole-module passes and emits only its environment stub, and no C
    wrapper (``no_cfunc_wrapper``) is generated for it. An overload whose options ask for a Python wrapper
    or name a pipeline of their own is compiled as numba does. Patched once per process, on the first
    :func:`cached_njit`.

    The callers link each overload's IR (now optimized function by function only, not as a module first)
    and optimize it whole in their own modules, as before; the same results (fresh clones before and after:
    the same 627 quick scenarios' digests, 143 reproduction rows and Harmony's 11 runs). A cold ``varcap warm``,
    four pairs one after the other on 2 cores, 2026-12-05: 93.7 → 92.7, 94.8 → 88.5,
    93.5 → 87.6, 96.3 → 91.4 CPU s (user + sys), peak RSS 785 → 718 MB; 235 → 62 libraries optimized
    and emitted."""
    if _OVERLOADS_LINKED:
        return
    from numba.core.typing import templates

    linked = _linked_compiler()
    orig = templates._OverloadFunctionTemplate._get_jit_decorator

    def _get_jit_decorator(self: Any) -> Any:
        jitter = orig(self)

        def jit(**opts: Any) -> Any:
            if opts.get("no_cpython_wrapper") and "pipeline_class" not in opts:
                opts = {"no_cfunc_wrapper": True, **opts, "pipeline_class": linked}
            return jitter(**opts)

        return jit

    templates._OverloadFunctionTemplate._get_jit_decorator = _get_jit_decorator  # type: ignore[method-assign]
    _OVERLOADS_LINKED.append(True)


def cached_njit(fn: Callable[..., Any] | None = None, *, entry: bool = False, **opts: Any) -> Any:
    """``numba.njit(cache=True, **opts)`` with checked cache files (above), typed with plain argument types
    first when called from compiled code (:func:`_unliteral_first`): how every compiled function of the
    simulator is made. Imports numba.

    ``entry=True`` for a function Python calls (a loop, a scan a policy's Python code runs); the others are
    compiled for their compiled callers only (:func:`_linked_class`), without the wrappers through which
    Python calls a numba function: numba generates, optimizes and emits those for every function it
    compiles, and each caller links in only the function itself. A cold ``varcap warm`` (every function
    compiled into an empty cache), two pairs run side by side on 2 cores, 2026-12-03: 246.5 → 237.5 and
    252.3 → 242.4 CPU s, peak RSS 987 → 898 MB. A Python call of such a function still works: it goes to
    a twin compiled with the wrappers on first use, cached apart (``tests/test_jit_linked.py`` holds the
    warm-up to calling none)."""

    def make(f: Callable[..., Any]) -> Any:
        from numba import njit

        _quick_flag_compare()
        _link_only_overloads()
        if entry:
            disp = njit(cache=True, **opts)(f)
            disp._cache = _checked_cache_class()(disp.py_func)
        else:
            disp = njit(
                cache=True,
                no_cpython_wrapper=True,
                no_cfunc_wrapper=True,
                pipeline_class=_linked_compiler(),
                **opts,
            )(f)
            disp.__class__ = _linked_class(type(disp))
            disp._cache = _checked_cache_class(linked=True)(disp.py_func)
            disp._twin_opts = opts
        _unliteral_first(disp)
        return disp

    return make if fn is None else make(fn)


def uncounted(fn: Callable[..., Any] | None = None, *, entry: bool = False) -> Any:
    """:func:`cached_njit` without numba's reference counting (``_nrt=False``, as :func:`kernel_fn`'s
    ``counted=False``): for a function outside the engine that allocates no array and returns none (numba
    refuses to compile one that allocates). numba otherwise counts a reference to every array argument at
    entry and exit, an atomic operation each: the harvest passes ask such functions about every queued job
    and node, and NRT_incref/decref were 14.7 % of a generated harvest instance's CPU (perf, 2026-12-03).
    ``entry``: as :func:`cached_njit`'s."""
    return cached_njit(fn, entry=entry, _nrt=False)


_LINKED: dict[type, type] = {}
_LINKED_COMPILER: list[type] = []


def _linked_compiler() -> type:
    """numba's compiler for a function compiled for its compiled callers only (:func:`cached_njit`), made
    once numba is imported: numba's nopython pipeline whose code library is a ``LinkedLibrary``.

    numba optimizes every library it finalizes as a whole module and turns it into machine code, a callee's
    with all of its own callees linked in, although a caller links in the callee's IR and optimizes and
    emits it again in its own module: every level of a call tree did the work of the levels below. A linked
    function is never entered from Python (:func:`_linked_class`), so nothing runs its own machine code:
    its library skips the whole-module passes and emits only a stub module defining the function's
    environment globals (which numba fills in at load), and caches that stub's object code beside the IR
    its callers link, as numba caches any library. Each entry's module is optimized whole once, as before.
    A library with a recursive call (numba resolves it through the library's own machine code) is
    finalized as numba does.

    A cold ``varcap warm``, run side by side on 2 cores (2026-12-03): 230.9 → 217.3 CPU s without the
    machine code, 232.2 → 211.1 without the passes too (a third pair, the first change against both:
    218.8 → 208.1), peak RSS 900 → 855 MB. The same schedules (39 stored quick runs' digests, Harmony's 11
    runs byte for byte) at the same speed (First-Fit's kernel at 1M jobs 0.54-0.57 µs a job either way)."""
    if _LINKED_COMPILER:
        return _LINKED_COMPILER[0]
    import weakref

    import llvmlite.binding as ll
    from llvmlite import ir
    from numba.core import cgutils
    from numba.core.codegen import JITCodeLibrary, RuntimeLinker
    from numba.core.compiler import CompilerBase, DefaultPassBuilder
    from numba.core.compiler_machinery import LoweringPass, register_pass
    from numba.core.typed_passes import NativeLowering

    class LinkedLibrary(JITCodeLibrary):  # type: ignore[misc]
        """A code library whose own machine code is a stub of its environment globals (above)."""

        def _optimize_final_module(self) -> None:
            """Nothing: the callers' modules are optimized whole, this library's IR linked in (its functions
            were optimized one by one as numba lowered them)."""

        def _finalize_final_module(self) -> None:
            mod = self._final_module
            if any(gv.name.startswith(RuntimeLinker.PREFIX) for gv in mod.global_variables):
                # a recursive call, resolved through this library's machine code: numba's passes and code
                JITCodeLibrary._optimize_final_module(self)
                super()._finalize_final_module()
                return
            self._finalize_dynamic_globals()
            self._verify_declare_only_symbols()
            stub_ir = ir.Module(name=f"{mod.name}@env")
            stub_ir.triple, stub_ir.data_layout = mod.triple, str(mod.data_layout)
            for gv in mod.global_variables:
                if gv.name.startswith("_ZN08NumbaEnv") and not gv.is_declaration:
                    env = ir.GlobalVariable(stub_ir, cgutils.voidptr_t, name=gv.name)
                    env.linkage = "common"
                    env.initializer = cgutils.get_null_value(env.type.pointee)
            stub = ll.parse_assembly(str(stub_ir))
            # numba's object-cache hook keeps the object code of a module that names its library: the stub's
            # is what the cache stores, and what a later process loads for it
            stub._CPUCodeLibrary__library = weakref.proxy(self)
            self._stub = stub
            cleanup = self._codegen._add_module(stub)
            if cleanup:
                weakref.finalize(self, cleanup)
            self._codegen._engine.finalize_object()
            self._finalized = True

    @register_pass(mutates_CFG=False, analysis_only=False)
    class LinkedLibraryPass(LoweringPass):  # type: ignore[misc]
        """Gives the lowering a :class:`LinkedLibrary` to lower into."""

        _name = "varcap_linked_library"

        def __init__(self) -> None:
            LoweringPass.__init__(self)

        def run_pass(self, state: Any) -> bool:
            if state.library is None:
                state.library = LinkedLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
                state.library.enable_object_caching()
            return False

    class LinkedCompiler(CompilerBase):  # type: ignore[misc]
        """numba's nopython pipeline lowering into a :class:`LinkedLibrary`."""

        def define_pipelines(self) -> list[Any]:
            pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
            at = next(i for i, (p, _) in enumerate(pm.passes) if p is NativeLowering)
            pm.passes.insert(at, (LinkedLibraryPass, "a linked function's code library"))
            pm.finalize()
            return [pm]

    _LINKED_COMPILER.append(LinkedCompiler)
    return LinkedCompiler


def _linked_class(base: type) -> type:
    """numba's dispatcher class ``base`` for a function compiled without Python's wrappers (made once
    numba is imported): its compiled versions are never entered in the table Python calls go through (a
    call there would jump to a wrapper that does not exist), and a Python call compiles, caches and calls
    the function's twin with the wrappers (an ordinary :func:`cached_njit` dispatcher, its cache files
    apart from this one's)."""
    if base in _LINKED:
        return _LINKED[base]

    class Linked(base):  # type: ignore[misc,valid-type]
        """A numba function compiled for its compiled callers only (:func:`cached_njit`)."""

        def add_overload(self, cres: Any) -> None:
            self.overloads[tuple(cres.signature.args)] = cres

        def _compile_for_args(self, *args: Any, **kws: Any) -> Any:
            # numba's C dispatch calls what this returns with the arguments: the twin dispatches them
            twin = self.__dict__.get("_twin")
            if twin is None:
                twin = self._twin = cached_njit(self.py_func, entry=True, **self._twin_opts)
            return twin

    Linked.__name__ = Linked.__qualname__ = f"Linked{base.__name__}"
    _LINKED[base] = Linked
    return Linked


def compiled() -> dict[str, Any]:
    """name → numba dispatcher of every engine function (imports numba and rebinds the modules' globals on
    first use)."""
    if _COMPILED:
        return _COMPILED
    mods = _load_modules()
    _invalidate_stale_cache()
    # each compiled function gets a copy of its module's namespace in which the engine functions are the
    # compiled ones; the modules themselves keep the plain functions (the interpreted engine stays pure)
    spaces = {mod.__name__: dict(vars(mod)) for mod in mods}
    disp = {}
    for name, fn in _PLAIN.items():
        twin = types.FunctionType(
            fn.__code__, spaces[fn.__module__], fn.__name__, fn.__defaults__, fn.__closure__
        )
        twin.__qualname__, twin.__module__, twin.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
        # every engine function states its counting (numba's functions inherit their caller's)
        disp[name] = cached_njit(
            twin,
            entry=name in _ENTRIES,
            inline="always" if name in _INLINE else "never",
            _nrt=name not in _UNCOUNTED,
        )
    by_fn = {id(fn): disp[name] for name, fn in _PLAIN.items()}
    for space in spaces.values():
        for k, v in list(space.items()):
            if callable(v) and id(v) in by_fn:
                space[k] = by_fn[id(v)]
    _COMPILED.update(disp)
    return _COMPILED


def is_compiled() -> bool:
    """Whether :func:`compiled` has run in this process (numba is imported)."""
    return bool(_COMPILED) and "numba" in sys.modules
