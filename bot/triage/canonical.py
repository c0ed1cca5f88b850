"""Canonical faults and generic lines (pure, data-driven): what makes a signature's identity.

* :data:`CANONICAL` — one identity per fault across wordings: a fault that tools, versions and
  wrappers say in several ways (``out of resource: shared memory, Required: …`` from triton,
  ``out of resource: triton_flex_attention Required: …`` from Inductor's autotuner, a pytest
  summary line cut after ``shared memory``; ``Value 'sm_120'`` / ``'sm_121a'`` for one GPU family
  the bundled ptxas does not know) gets one ``(type, line)``.
* :data:`GENERIC` — lines that say *that* something failed, not *what*: a fatal signal, an illegal
  address, an unspecified launch failure, a bare ``PassManager::run failed``, an exception
  without a message. Such a line is never an identity alone: the test (or, without one, the
  innermost frame, or the text itself) joins it, so two faults are split rather than merged.

Sources: triton's ``OutOfResources`` and ``PTXASError`` texts, Inductor's autotuner message,
ptxas's ``Value … is not defined for option 'gpu-name'``, torch's CUDA error strings and the
labelled corpora in ``tests/data/triage/`` (the rule for each entry is in its comment).
"""
from __future__ import annotations

import re
from http import HTTPStatus

from bot.triage.normalize import strip_abi_tag, symbol_name

__all__ = ["CANONICAL", "GENERIC", "ZE_RESULTS", "canonical", "is_generic", "arch_family", "compute_family", "ptx_type",
           "fold_runtime_case", "header_name", "windows_message", "ze_result", "http_status_line", "service_domain"]


def arch_family(arch: str) -> str:
    """``sm_121a`` → ``sm_12x``, ``sm_90`` → ``sm_9x``: one GPU generation (a toolchain that lacks
    one of its members lacks the others of its release; ``sm_80`` and ``sm_90`` stay apart)."""
    digits = arch[3:].rstrip("af")
    return f"sm_{digits[:-1]}x" if len(digits) >= 2 else arch


def compute_family(arch: str) -> str:
    """``compute_120a`` → ``compute_12x``: a virtual architecture's GPU generation, as
    :func:`arch_family` for ``sm_`` (nvcc that does not know ``compute_120`` does not know
    ``compute_120a`` or ``compute_121`` either; ``compute_86`` and ``compute_75`` stay apart)."""
    digits = arch[8:].rstrip("af")
    return f"compute_{digits[:-1]}x" if len(digits) >= 2 else arch


#: PTX's narrow data types, the part of a ptxas feature that decides which GPUs have it
_PTX_NARROW = re.compile(r"(?:bf16|f16|tf32|e[2-5]m[0-3]|ue8m0|[sub]4|[sub]8)(?:x\d+)?$")
_VECTOR = re.compile(r"x\d+$")


def ptx_type(feature: str) -> str:
    """``cvt.bf16.f32`` → ``.bf16``, ``.bf16x2`` → ``.bf16``: the narrow data type a ptxas
    feature is about (a conversion to bf16 and a bf16 operand lack the same hardware); a
    feature that names none stays as it is."""
    for part in feature.split("."):
        if part and _PTX_NARROW.match(part):
            return "." + _VECTOR.sub("", part)
    return feature


#: The Windows system messages a loader error quotes (``FormatMessage`` in the machine's language:
#: Python's ``DLL load failed while importing X: <message>``), by error code, English first, then
#: German, French, Spanish, Chinese and Japanese — one fault whatever the language of the machine
#: (winerror.h: ERROR_MOD_NOT_FOUND 126, ERROR_PROC_NOT_FOUND 127, ERROR_DLL_INIT_FAILED 1114)
_WINDOWS_MESSAGES = (
    ("The specified module could not be found.", "Das angegebene Modul wurde nicht gefunden.",
     "Le module spécifié est introuvable.", "No se puede encontrar el módulo especificado.", "找不到指定的模块。",
     "指定されたモジュールが見つかりません。"),
    ("The specified procedure could not be found.", "Die angegebene Prozedur wurde nicht gefunden.",
     "La procédure spécifiée est introuvable.", "No se encontró el proceso especificado.", "找不到指定的程序。",
     "指定されたプロシージャが見つかりません。"),
    ("A dynamic link library (DLL) initialization routine failed.", "Eine DLL-Initialisierungsroutine ist fehlgeschlagen.",
     "Une routine d'initialisation d'une bibliothèque de liens dynamiques (DLL) a échoué.",
     "Error en una rutina de inicialización de biblioteca de vínculos dinámicos (DLL).", "动态链接库(DLL)初始化例程失败。",
     "ダイナミック リンク ライブラリ (DLL) 初期化ルーチンの実行に失敗しました。"),
)
_WINDOWS_ENGLISH = {m.rstrip(".。"): ms[0] for ms in _WINDOWS_MESSAGES for m in ms}


def windows_message(message: str) -> str:
    """A Windows system message in English (:data:`_WINDOWS_MESSAGES`); one not in the table as it is."""
    return _WINDOWS_ENGLISH.get(message.strip().rstrip(".。"), message.strip())


#: headers that only a Python whose development headers are missing or incomplete lacks:
#: ``Python.h`` includes ``pyconfig.h`` (CPython's ``Include/Python.h``), and both come with the
#: same package (``python3-dev``) or the same ``include`` folder of an embedded Python
_PYTHON_HEADERS = frozenset({"Python.h", "pyconfig.h"})


def header_name(header: str) -> str:
    """A missing header as the fix names it: ``pyconfig.h`` → ``Python.h`` (Python's development
    headers, :data:`_PYTHON_HEADERS`); any other header as it is."""
    return "Python.h" if header in _PYTHON_HEADERS else header


#: Level Zero's result codes by value (the Level Zero specification, ``ze_api.h`` ``ze_result_t``):
#: the errors a GPU runtime reports when it loads or runs a kernel
ZE_RESULTS = {
    0x70000001: "ZE_RESULT_ERROR_DEVICE_LOST", 0x70000002: "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
    0x70000003: "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", 0x70000004: "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE",
    0x70000005: "ZE_RESULT_ERROR_MODULE_LINK_FAILURE",
    0x78000001: "ZE_RESULT_ERROR_UNINITIALIZED", 0x78000002: "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
    0x78000003: "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE", 0x78000004: "ZE_RESULT_ERROR_INVALID_ARGUMENT",
    0x78000005: "ZE_RESULT_ERROR_INVALID_NULL_HANDLE", 0x78000006: "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE",
    0x78000007: "ZE_RESULT_ERROR_INVALID_NULL_POINTER", 0x78000008: "ZE_RESULT_ERROR_INVALID_SIZE",
    0x78000009: "ZE_RESULT_ERROR_UNSUPPORTED_SIZE", 0x7800000A: "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT",
    0x7800000B: "ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT", 0x7800000C: "ZE_RESULT_ERROR_INVALID_ENUMERATION",
    0x7800000D: "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION", 0x7800000E: "ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT",
    0x7800000F: "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY", 0x78000010: "ZE_RESULT_ERROR_INVALID_GLOBAL_NAME",
    0x78000011: "ZE_RESULT_ERROR_INVALID_KERNEL_NAME", 0x78000012: "ZE_RESULT_ERROR_INVALID_FUNCTION_NAME",
    0x78000013: "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION",
    0x78000014: "ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION",
    0x78000015: "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX",
    0x78000016: "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE",
    0x78000017: "ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE", 0x78000018: "ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED",
    0x78000019: "ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE", 0x7800001A: "ZE_RESULT_ERROR_OVERLAPPING_REGIONS",
    0x7FFFFFFE: "ZE_RESULT_ERROR_UNKNOWN",
}


def ze_result(code: str) -> str:
    """A Level Zero result as its name: ``0x78000011`` → ``ZE_RESULT_ERROR_INVALID_KERNEL_NAME``
    (:data:`ZE_RESULTS`); a name as it is; a code the table does not name as lower-case hex."""
    if code.startswith("ZE_RESULT_"):
        return code
    value = int(code, 16)
    return ZE_RESULTS.get(value, f"0x{value:08x}")


#: huggingface_hub's default endpoint: the service its ``HfHubHTTPError`` speaks of when the message names no
#: url (a mirror set by ``HF_ENDPOINT`` is named by the url its messages carry)
_HUB = "huggingface.co"
#: a country code's second-level domain (``co.uk``, ``com.cn``): the registrable domain has one label more
#: the generic second-level labels registries put under a country code (``co.uk``, ``com.au``, ``ac.jp``,
#: ``ne.jp``, ``gob.mx``): under a two-letter top-level domain only these make a suffix of two labels —
#: ``hf.co`` and ``gcr.io`` are an operator's own names
_SECOND_LEVEL = re.compile(r"(?:^|\.)(?:co|com|net|org|gov|edu|ac|or|ne|go|gob|mil|nic|ltd|plc|sch)\.[a-z]{2}$")


def service_domain(host: str) -> str:
    """The registrable domain of ``host`` without its port: ``hub-ci.huggingface.co`` → ``huggingface.co``,
    ``files.pythonhosted.org:443`` → ``pythonhosted.org``, ``www.example.co.uk`` → ``example.co.uk``; an IP
    address is returned as it is. An approximation of the public suffix list (a two-letter country code
    under a generic second-level label — ``co``, ``com``, ``ac``, … — is a suffix of two labels), enough to
    name one operator."""
    host = host.lower().rsplit(":", 1)[0] if host.count(":") == 1 else host.lower()
    labels = host.split(".")
    if len(labels) <= 2 or all(x.isdigit() for x in labels):
        return host
    keep = 3 if _SECOND_LEVEL.search(host) else 2
    return ".".join(labels[-keep:])


def http_status_line(code: str, host: str | None) -> str:
    """The canonical line of an HTTP error status ``code`` (three digits) answered by ``host`` (None: not
    named). A 5xx is ``HTTP 5xx Server Error from <registrable domain>``: the service failing (RFC 9110 §15.6),
    whatever its gateway answered — 500, 502, 503 and 504 come and go within one outage, and its hosts
    (``huggingface.co``, ``hub-ci.huggingface.co``) are one operator's; any other status is ``HTTP <code>
    <reason> from <host>`` with the reason phrase of RFC 9110 (``http.HTTPStatus``: a report's "Gateway
    Time-out" or a server's own wording does not split it) and the whole host (a 429 of the Hub's downloads
    and of its Inference API are two quotas), never the URL's user info (``user:token@host``: a credential
    must reach no key, title or issue, and a user name is no service). Without a host the line stops before
    ``from``."""
    if host and "@" in host:
        host = host.rsplit("@", 1)[1] or None
    n = int(code)
    if 500 <= n <= 599:
        head = "HTTP 5xx Server Error"
        host = service_domain(host) if host else None
    else:
        try:
            head = f"HTTP {n} {HTTPStatus(n).phrase}"
        except ValueError:
            head = f"HTTP {n}"
    return f"{head} from {host}" if host else head


#: group name → how the template writes it
_GROUPS = {"arch": arch_family, "varch": compute_family, "feature": ptx_type, "so": strip_abi_tag, "symbol": symbol_name,
           "winmsg": windows_message, "header": header_name, "ze": ze_result, "by": strip_abi_tag}


#: (literal the chosen line must hold, pattern over the raw line, type, line template). A
#: template's ``{arch}`` is the ``arch`` group through :func:`arch_family`, ``{feature}`` the
#: ``feature`` group through :func:`ptx_type`; other groups are written as matched.
CANONICAL: tuple[tuple[str, re.Pattern, str, str], ...] = (
    # triton's OutOfResources for shared memory, in its own words or Inductor's (the resource is
    # then the kernel's name, the limit is the shared-memory limit), however the sizes are written
    ("out of resource", re.compile(r"out of resource: (?:shared memory|(?!threads|registers)[^\s,]+ Required: ?\d+,? Hardware limit)"),
     "OutOfResources", "out of resource: shared memory"),
    # ptxas older than the GPU: one identity per GPU generation
    ("is not defined for option 'gpu-name'",
     re.compile(r"Value '(?P<arch>sm_\d+[af]?)' is not defined for option 'gpu-name'"),
     "ptxas", "Value '{arch}' is not defined for option 'gpu-name'"),
    # nvcc older than the GPU: one identity per GPU generation, as ptxas's above
    ("Unsupported gpu architecture",
     re.compile(r"Unsupported gpu architecture '(?P<varch>compute_\d+[af]?)'"),
     "nvcc", "Unsupported gpu architecture '{varch}'"),
    # torch without a usable triton: the first sentence names it, the rest varies by version
    ("Cannot find a working triton installation", re.compile(r"Cannot find a working triton installation"),
     "RuntimeError", "Cannot find a working triton installation"),
    # torch's CUDA OOM: the tail (capacity, free, reserved, advice) varies by version and by run
    ("CUDA out of memory", re.compile(r"CUDA out of memory"), "OutOfMemoryError", "CUDA out of memory"),
    # ptxas that failed without its message in the text, in triton's words or as the subprocess
    # error around it: only the exit status is known (generic below: the test joins it)
    ("failed with error code", re.compile(r"`ptxas` failed with error code (?P<code>\d+)"),
     "ptxas", "ptxas failed with exit status {code}"),
    ("returned non-zero exit status", re.compile(r"ptxas(?:\.exe)?'.*returned non-zero exit status (?P<code>\d+)"),
     "ptxas", "ptxas failed with exit status {code}"),
    # the C compiler that builds triton's launcher, known only by its command and exit status
    # (``CalledProcessError: Command '['/usr/bin/gcc', 'main.c', …]' returned non-zero exit status 1``):
    # the diagnostic it printed names the cause; without it, generic below
    ("returned non-zero exit status",
     re.compile(r"Command '\[b?['\"](?:[^'\"]*[/\\])?(?:[\w.+-]+-)?(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+|tcc|cl|icx|icpx|icc)"
                r"(?:-[\d.]+)?(?:\.exe)?['\"].*returned non-zero exit status (?P<code>-?\d+)"),
     "CompilerError", "C compiler failed with exit status {code}"),
    # Level Zero's result, by its name (:func:`ze_result`): triton's XPU driver prints the code in hex
    # (``Triton Error [ZE]: 0x78000011``), its loader the name (``Error during Intel loadBinary:
    # ZE_RESULT_ERROR_INVALID_KERNEL_NAME``); generic below, as CUDA's and HIP's codes are
    ("ZE error: ", re.compile(r"ZE error: (?P<ze>0x[0-9a-fA-F]{1,8}\b|ZE_RESULT_[A-Z_]+)"), "ZEError", "ZE error: {ze}"),
    # LLVM's warning that it does not know the GPU (a triton whose LLVM predates it; ptxas fails
    # next): one identity per GPU generation, as ptxas's ``Value 'sm_120' is not defined``
    ("is not a recognized processor for this target",
     re.compile(r"'(?P<arch>sm_\d+[af]?)' is not a recognized processor for this target"),
     "Warning", "'{arch}' is not a recognized processor for this target"),
    # the HIP runtime's error by its name: its message varies by ROCm version ("Coudn't find binary
    # for current devices!", "Unable to find code object for all current devices!")
    ("HIP error: hipError", re.compile(r"HIP error: (?P<name>hipError[A-Z]\w*):"), "HIPError", "HIP error: {name}"),
    # a ptxas feature missing on the target: one fault per data type and target
    # (``Feature '.bf16' requires .target sm_80 or higher``, ``Feature 'cvt.bf16.f32' …``)
    ("requires .target sm_", re.compile(r"Feature '(?P<feature>[^']+)' requires \.target (?P<target>sm_\w+) or higher"),
     "ptxas", "Feature '{feature}' requires .target {target} or higher"),
    # a missing header, in gcc's/clang's, MSVC's (any language: C1083) and TinyCC's words
    ("No such file or directory",
     re.compile(r"fatal error: ['\"“‘]?(?P<header>[^\s'\"“”‘’:]+\.\w+)['\"”’]?: No such file or directory"),
     "CompilerError", "missing header {header}"),
    ("file not found", re.compile(r"fatal error: ['\"](?P<header>[^'\"]+)['\"] file not found"),
     "CompilerError", "missing header {header}"),
    ("C1083", re.compile(r"fatal error C1083:(?:(?!source file)[^'\"“‘])*['\"“‘](?P<header>[^'\"”’]+)['\"”’]"),
     "CompilerError", "missing header {header}"),
    ("include file '", re.compile(r"error: include file '(?P<header>[^']+)' not found"),
     "CompilerError", "missing header {header}"),
    # a missing library, in GNU ld's, lld's, ld64's, TinyCC's and MSVC link's words, and triton's
    # own check before it links ``-lcuda`` (``AssertionError: libcuda.so cannot found!``)
    ("cannot find -l", re.compile(r"cannot find -l(?P<lib>[\w.+-]+?)(?::|\s|$)"), "LinkerError", "missing library {lib}"),
    ("unable to find library -l", re.compile(r"unable to find library -l(?P<lib>[\w.+-]+)"),
     "LinkerError", "missing library {lib}"),
    ("library not found for -l", re.compile(r"library not found for -l(?P<lib>[\w.+-]+)"),
     "LinkerError", "missing library {lib}"),
    ("error: library '", re.compile(r"error: library '(?P<lib>[^']+)' not found"), "LinkerError", "missing library {lib}"),
    ("LNK1181", re.compile(r"LNK1181:[^'\"]*['\"](?:[^'\"]*[/\\])?(?P<lib>[^'\"/\\]+?)(?:\.lib)?['\"]"),
     "LinkerError", "missing library {lib}"),
    # a symbol the linker did not find (GNU ld, lld): the symbol, not the object file's offset
    ("undefined reference to ", re.compile(r"undefined reference to [`'\"](?P<symbol>[^`'\"]+)['\"]"),
     "LinkerError", "undefined reference to '{symbol}'"),
    ("cannot found", re.compile(r"\blib(?P<lib>\w+)\.so cannot found"), "LinkerError", "missing library {lib}"),
    # the dynamic loader's (glibc ``dlerror``) ``<file>: undefined symbol: <sym>``, however the
    # report wraps it (Python's ImportError, ctypes' OSError, a bare line): the module without its
    # directory and its Python/ABI tag (``x.cpython-310-x86_64-linux-gnu.so`` → ``x.so``), and the
    # symbol — one library missing one symbol is one fault whichever interpreter loaded it
    (": undefined symbol: ", re.compile(r"(?:^|[\s/\\'\"`(])(?P<so>[\w.+-]+?\.so)(?:\.[\d.]+)?: undefined symbol: (?P<symbol>[^\s'\"`,;)]+)"),
     "ImportError", "{so}: undefined symbol: {symbol}"),
    # Python's loader error on Windows: the system's message in the machine's language, by its
    # English words (a module not found and a failed DLL initialisation stay two faults)
    ("DLL load failed while importing ", re.compile(r"DLL load failed while importing (?P<mod>[\w.]+): (?P<winmsg>[^\n]+)"),
     "ImportError", "DLL load failed while importing {mod}: {winmsg}"),
    # torch's warning that its wheel has no kernels for the GPU (``torch/cuda/__init__.py``
    # ``_check_capability``): one fault per GPU generation, whichever card of it
    ("is not compatible with the current PyTorch installation",
     re.compile(r"CUDA capability (?P<arch>sm_\d+[af]?) is not compatible with the current PyTorch installation"),
     "Warning", "CUDA capability {arch} is not compatible with the current PyTorch installation"),
    # Python's ``cannot import name 'X' from 'pkg.mod'``: the name and the top-level package (a
    # name that moved between the modules of one package is one API change: the fix is a matching
    # version of that package; another package's name of the same spelling stays apart). A line
    # cut at the terminal width after ``from 'pkg.`` names the package too
    ("cannot import name '", re.compile(r"cannot import name '(?P<name>[^']+)' from '(?P<pkg>[A-Za-z_]\w*)(?:'|\.[\w.]*(?:'|$))"),
     "ImportError", "cannot import name '{name}' from '{pkg}'"),
    # Python's ``No module named 'X'`` however it is reported (ModuleNotFoundError, ImportError, a
    # library's "Error caught was: …" warning)
    ("No module named '", re.compile(r"No module named '(?P<mod>[\w.]+)'"), "ModuleNotFoundError", "No module named '{mod}'"),
    # Python's ``module 'X' has no attribute 'Y'`` however it is reported (AttributeError, its
    # repr, a report's title without the exception's name): an API that moved or was removed
    ("' has no attribute '", re.compile(r"module '(?P<mod>[\w.]+)' has no attribute '(?P<attr>\w+)'"),
     "AttributeError", "module '{mod}' has no attribute '{attr}'"),
    # an HTTP error status by its code and the host that answered (the line :func:`http_status_line` writes), in
    # requests' (and huggingface_hub's) words, "429 Client Error: Too Many Requests for url: https://host/…",
    # also as huggingface_hub writes it, "… for URL  https://host/…", and httpx's, "Client error '429 Too Many
    # Requests' for url 'https://host/…'": the path names the file a run fetched, which varies between runs of
    # one fault; the host names the service (the Hub's downloads and its Inference API are two)
    (" for url", re.compile(r"(?P<code>[1-5]\d\d) (?:Client|Server) Error: (?P<reason>[A-Za-z][\w' -]*?) for url: "
                            r"https?://(?P<host>[^/\s'\"]+)"),
     "HTTPError", ""),
    (" for URL", re.compile(r"(?P<code>[1-5]\d\d) (?:Client|Server) Error: (?P<reason>[A-Za-z][\w' -]*?) for URL:?\s+"
                            r"https?://(?P<host>[^/\s'\"]+)"),
     "HTTPError", ""),
    (" for url", re.compile(r"(?:Client|Server|Informational|Redirect) (?:error|response) '(?P<code>[1-5]\d\d) "
                            r"(?P<reason>[^']+)' for url '?https?://(?P<host>[^/\s'\"]+)"),
     "HTTPError", ""),
    # uv's (reqwest's) words for the same: "HTTP status server error (500 Internal Server Error) for url
    # (https://host/…)"
    ("HTTP status ", re.compile(r"HTTP status (?:client|server|informational|redirection) error \((?P<code>[1-5]\d\d) "
                                r"(?P<reason>[^)]+)\) for url \(https?://(?P<host>[^/\s)'\"]+)"),
     "HTTPError", ""),
    # pip's own words ("HTTP error 503 while getting https://files.pythonhosted.org/…")
    ("HTTP error ", re.compile(r"HTTP error (?P<code>[1-5]\d\d) while getting https?://(?P<host>[^/\s'\"]+)"),
     "HTTPError", ""),
    # a status whose line names no host: requests' "503 Server Error: Backend is unhealthy" cut before its
    # url, huggingface_hub's bare "502 Server Error", GitHub Actions' tool cache ("Unexpected HTTP response:
    # 503", every setup-* action's download): the host is the last one the text named before it
    # (:func:`bot.triage.signature.signature_of`), the Hub's own client's the Hub
    (" Error", re.compile(r"(?:^|[\s:])(?P<code>[1-5]\d\d) (?:Client|Server) Error(?::|$)"), "HTTPError", ""),
    ("Unexpected HTTP response: ", re.compile(r"Unexpected HTTP response: (?P<code>[1-5]\d\d)\b"), "HTTPError", ""),
    # Go's registry clients (docker's and containerd's pulls: "Error response from daemon: Head
    # \"https://ghcr.io/v2/…/manifests/v1\": received unexpected HTTP status: 503 Service Unavailable"): the host
    # of the request it quotes, else (a line that quotes none) the registry of the image the text pulled
    ("unexpected HTTP status: ", re.compile(r"(?:\"(?:https?://)?(?P<host>[^/\s\"]+)/[^\"\s]*\": )?"
                                           r"received unexpected HTTP status: (?P<code>[1-5]\d\d)\b"), "HTTPError", ""),
    # Intel's Unified Runtime (and the older SYCL plugin interface) result behind ``Native API failed.``:
    # "Native API returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)" — the first sentence alone dropped the code
    # that tells a lost device from an exhausted memory; generic below, as Level Zero's codes are
    ("Native API returns: ", re.compile(r"Native API returns: -?\d+ \((?P<ur>(?:UR_RESULT|PI_ERROR)_[A-Z_]+)\)"),
     "RuntimeError", "Native API failed: {ur}"),
    # the dynamic loader's version error (glibc: "<program>: <library>: version `GLIBCXX_3.4.30' not found
    # (required by <program>)"), bare from a tool or in Python's ImportError: the library, the version and
    # the program that needs it (its name without directory and ABI tag; from the line's prefix when the
    # report cut the "required by")
    ("' not found (required by ",
     re.compile(r"(?:^|[\s/\\'\"`(])(?P<so>[\w.+-]+?\.so(?:\.\d+)*): version [`'](?P<version>[\w.]+)' not found "
                r"\(required by (?:[^)\s]*[/\\])?(?P<by>[^)/\\\s]+)\)"),
     "ImportError", "{so}: version '{version}' not found (required by {by})"),
    ("' not found", re.compile(r"(?:^|\s)(?:[^\s:]*[/\\])?(?P<by>[\w.+-]+): (?:[^\s:]*[/\\])?(?P<so>[\w.+-]+?\.so(?:\.\d+)*): "
                               r"version [`'](?P<version>[\w.]+)' not found\s*$"),
     "ImportError", "{so}: version '{version}' not found (required by {by})"),
    # torch's check of the CUDA driver (``torch/cuda/__init__.py`` ``_check_driver``, later
    # ``c10/cuda/CUDAFunctions.cpp``), raised as RuntimeError, warned as ``UserWarning: CUDA
    # initialization: …``, or, in old torch, an AssertionError whose message starts on the next line
    ("driver on your system is too old", re.compile(r"The NVIDIA driver on your system is too old"),
     "RuntimeError", "The NVIDIA driver on your system is too old"),
    # triton's checks a user meets, in each release's words (``python/triton/language/semantic.py``
    # ``dot``): operands of ``tl.dot`` below the minimum dot size — "All values in both first input
    # shape (…) and second input shape (…) must be >= 16!" (2.x), "All non-batch values …" (2.2–3.0),
    # "Input shapes should have M >= {m}, N >= {n} and K >= {k}" (3.x, the minimum per target)
    ("must be >= 16!", re.compile(r"All (?:non-batch )?values in both first input shape .* must be >= 16!"),
     "AssertionError", "Input shapes should have M >= 16, N >= 16 and K >= 16"),
    ("Input shapes should have M >= ",
     re.compile(r"Input shapes should have M >= (?P<m>\d+), N >= (?P<n>\d+) and K >= (?P<k>\d+)"),
     "AssertionError", "Input shapes should have M >= {m}, N >= {n} and K >= {k}"),
    # triton's fp8 type check ("type fp8e4nv not supported in this architecture. The supported fp8
    # dtypes are ('fp8e4b15', 'fp8e5')": the list varies by target; ValueError, a repr line in a
    # CompilationError, or quoted)
    ("not supported in this architecture",
     re.compile(r"type (?P<type>fp8\w+) not supported in this architecture"),
     "ValueError", "type {type} not supported in this architecture"),
    # ccache that cannot write its temporary file ("ccache: error: Failed to create temporary file for
    # /run/user/0/ccache-tmp/tmp.cpp_stdout.x83PCf: Permission denied"; "failed" in lower case before ccache
    # 4): the file is a random name under ccache's directory, the OS error names the cause — a directory a
    # sandbox mounts read-only (Bazel's), a temporary directory the build user cannot write (fakeroot's
    # /run/user/0) —, so the identity is ccache's words and the error, one per cause in every build
    ("emporary file for ", re.compile(r"ccache: error: [Ff]ailed to create temporary file for \S+: (?P<err>[^\n]+?)\s*$"),
     "ccache", "ccache: error: failed to create temporary file: {err}"),
)

#: Generic lines, over ``"<type>: <masked line>"`` (after the canonical step).
GENERIC: re.Pattern = re.compile(
    r"^[\w.()\[\]]+: ?$"                                       # an exception (or outcome) without a message
    r"|^(?:CUDA|HIP)Error: (?:CUDA|HIP) error: (?:an illegal memory access was encountered|unspecified launch failure"
    r"|misaligned address|an illegal instruction was encountered|invalid argument|Code: \d+,? Messsage: invalid argument"
    r"|unknown error|invalid program counter|device-side assert triggered|warp illegal address"
    # the driver refused the module: a driver older than the toolchain, a corrupt or cut binary —
    # the words name no kernel, build or machine
    r"|device kernel image is invalid|Code: \d+,? Messsage: device kernel image is invalid)"
    r"|^RuntimeError: PassManager::run failed$"
    r"|^ptxas: ptxas failed with exit status \d+$"
    r"|^CompilerError: C compiler failed with exit status -?\d+$"
    r"|^HIPError: HIP error: hipError(?:IllegalAddress|LaunchFailure|InvalidValue|Unknown|Assert|IllegalInstruction"
    r"|MisalignedAddress)\b"
    # a Level Zero result names no kernel, build or machine (the same code stood for four causes in
    # fresh5.jsonl): the test joins it
    r"|^ZEError: ZE error: \S+$"
    # a Unified Runtime result, likewise
    r"|^RuntimeError: Native API failed: \S+$"
    r"|^CompilationError: (?:at <pos>:?)?$"                    # a CompilationError whose cause was not printed
)


def canonical(typ: str, raw: str) -> tuple[str, str] | None:
    """The canonical ``(type, line)`` of a chosen line, or None when no entry matches."""
    for literal, rx, ctype, template in CANONICAL:
        if literal in raw:
            m = rx.search(raw)
            if m:
                groups = m.groupdict()
                if ctype == "HTTPError":
                    host = groups.get("host") or (_HUB if typ == "HfHubHTTPError" else None)
                    return ctype, http_status_line(groups["code"], host)
                for name, how in _GROUPS.items():
                    if name in groups:
                        groups[name] = how(groups[name])
                return ctype, template.format(**groups) if groups else template
    return None


#: the types a :data:`GENERIC` line other than an empty message can have
_GENERIC_TYPES = frozenset({"CUDAError", "HIPError", "ZEError", "RuntimeError", "CompilationError", "ptxas",
                            "CompilerError"})


def is_generic(typ: str, line: str) -> bool:
    """Whether ``"<type>: <line>"`` (masked) says only that something failed."""
    if not line:
        return True
    return typ in _GENERIC_TYPES and GENERIC.match(f"{typ}: {line}") is not None


#: a CUDA/HIP runtime error whose message starts with a capitalised word (the runtimes' strings,
#: ``cudaGetErrorString``/``hipGetErrorString``, are lower case: "invalid device function"; a
#: capital is a report's retyping or a wrapper's formatting)
_RUNTIME_CAPITAL = re.compile(r"((?:CUDA|HIP) error: )([A-Z])(?=[a-z]+\b)")


def fold_runtime_case(typ: str, ident: str) -> str:
    """The identity of a CUDA/HIP runtime error with its message's first letter in lower case
    when the rest is (``HIP error: Invalid device function`` is ``HIP error: invalid device
    function``); an acronym, an error name or a message with other capitals (``CUBLAS_STATUS_…``,
    ``hipErrorNoBinaryForGpu``, ``Code: 1, Messsage: …``) stays; other types are returned as
    they are."""
    if typ not in ("CUDAError", "HIPError"):
        return ident
    m = _RUNTIME_CAPITAL.match(ident)
    if m is None:
        return ident
    rest = ident[m.end():]
    # only a sentence in lower case after its first letter ("Code: 1, Messsage: …" stays)
    return f"{m.group(1)}{m.group(2).lower()}{rest}" if rest == rest.lower() else ident
