#!/usr/bin/env python3
"""Where a profile's time goes, by layer: reads a folded stack file written by `loadgen profile`
(NAME.on-cpu.folded) and, for each layer (a name and a regular expression on frame names),
prints two shares of the samples:

  inside  the samples whose stack holds a frame of the layer anywhere (it, or what it called)
  own     the samples whose innermost frame of an application layer is the layer's (where the
          time is spent, once the layers it called are taken out); the runtime's layers (the
          interpreter, V8, its garbage collector, libuv) own only what no application layer
          called, so a V8 builtin run for a function of the gateway counts as the gateway's

Usage: scripts/profile-layers.py FOLDED (--layers litellm|portkey|syscalls | NAME=REGEX ...)

The named sets of layers are those BENCHMARKS.md describes (`--preset`, their former flag, is
still read): LiteLLM's proxy (Python frames named by the perf trampoline, py::FUNCTION:PATH),
Portkey's gateway (Node.js frames from --perf-basic-prof, JS:NAME PATH), and the system calls
(named by the C library's wrapper that entered the kernel).
"""

import re
import sys

LAYER_SETS = {
    "litellm": [
        ("uvicorn (HTTP server)", r"py::.*/uvicorn/"),
        ("starlette / fastapi (routing, middleware)", r"py::.*/(starlette|fastapi)/"),
        ("litellm proxy (auth, hooks, routing)", r"py::.*/litellm/proxy/"),
        ("litellm router", r"py::.*/litellm/router"),
        ("litellm logging and callbacks", r"py::.*/litellm/(litellm_core_utils/litellm_logging|integrations|_logging)"),
        ("litellm core (completion, provider translation)", r"py::.*/litellm/"),
        ("openai SDK", r"py::.*/openai/"),
        ("httpx / httpcore / aiohttp (upstream call)", r"py::.*/(httpx|httpcore|aiohttp)/"),
        ("pydantic", r"(py::.*/pydantic/|_pydantic_core)"),
        ("copy (deepcopy)", r"py::.*/copy\.py"),
        ("imports at request time (importlib)", r"py::.*importlib"),
        ("asyncio / uvloop (event loop)", r"(py::.*/asyncio/|uvloop)"),
        ("other Python", r"py::"),
        ("the interpreter", r"(_PyEval_EvalFrameDefault|python3)", False),
    ],
    "portkey": [
        ("@hono/node-server (HTTP adapter)", r"JS:.*/@hono/node-server/"),
        ("hono (routing, middleware)", r"JS:.*/node_modules/hono/"),
        ("portkey gateway (handlers, providers)", r"JS:.*/@portkey-ai/gateway/"),
        ("undici (fetch to the upstream)", r"JS:.*undici"),
        ("node:http (server)", r"JS:.*node:_http"),
        ("other Node.js internals", r"JS:.*node:"),
        ("garbage collection", r"(v8::internal::(Scavenger|Heap|MarkCompact|ConcurrentMarking|GC))", False),
        ("V8 (compiler, inline caches, runtime)", r"(v8::|Builtins_)", False),
        ("libuv", r"uv_", False),
    ],
    "syscalls": [],
}


def layers_of(args):
    """(name, regex, owns) for each layer: a named set's, or NAME=REGEX from the command line."""
    if len(args) == 2 and args[0] == "--layers":
        return [(layer + (True,))[:3] for layer in LAYER_SETS[args[1]]]
    return [tuple(a.split("=", 1)) + (True,) for a in args]


def syscall_of(frames):
    """The system call a stack is in: named by the C library's wrapper that entered the kernel
    (the frame before `entry_SYSCALL_64`: `__GI___writev` is writev), or by the kernel's
    `__x64_sys_*` frame when the wrapper is not in the stack."""
    for i, frame in enumerate(frames):
        if frame.startswith("entry_SYSCALL_64") and i > 0 and not frames[i - 1].endswith("_[k]"):
            wrapper = re.sub(r"@.*$", "", frames[i - 1])
            return re.sub(r"^(__GI_)?(__libc_)?_*", "", wrapper)
    for frame in frames:
        if re.match(r"__(x64|se)_sys_", frame):
            return frame.removesuffix("_[k]").split("_sys_", 1)[1]
    return None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, args = sys.argv[1], sys.argv[2:]
    if args[:1] == ["--preset"]:
        args = ["--layers"] + args[1:]
    stacks = []
    for line in open(path, encoding="utf-8"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        stacks.append((stack.split(";"), int(count)))
    total = sum(n for _, n in stacks) or 1
    if args == ["--layers", "syscalls"]:
        calls = {}
        for frames, n in stacks:
            name = syscall_of(frames)
            if name:
                calls[name] = calls.get(name, 0) + n
        kernel = sum(n for frames, n in stacks if frames[-1].endswith("_[k]"))
        print(f"{path}: {total} samples, {100 * kernel / total:.1f}% with a kernel function on top")
        for name, n in sorted(calls.items(), key=lambda c: -c[1])[:12]:
            print(f"  {name:32} {100 * n / total:5.1f}%")
        return
    layers = [(name, re.compile(rx), owns) for name, rx, owns in layers_of(args)]
    inside = {name: 0 for name, _, _ in layers}
    own = {name: 0 for name, _, _ in layers}
    own["(no layer)"] = 0
    for frames, n in stacks:
        application, runtime = None, None
        seen = set()
        for frame in frames:
            for name, rx, owns in layers:
                if rx.search(frame):
                    seen.add(name)
                    if owns:
                        application = name
                    else:
                        runtime = name
                    break
        for name in seen:
            inside[name] += n
        own[application or runtime or "(no layer)"] += n
    print(f"{path}: {total} samples")
    print(f"  {'layer':52} {'inside':>7} {'own':>7}")
    for name, _, _ in layers:
        print(f"  {name:52} {100 * inside[name] / total:6.1f}% {100 * own[name] / total:6.1f}%")
    print(f"  {'(no layer)':52} {'':>7} {100 * own['(no layer)'] / total:6.1f}%")


if __name__ == "__main__":
    main()
