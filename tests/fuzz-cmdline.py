#!/usr/bin/env python3
"""fuzz-cmdline.py - random and mutated command lines for every program.

Each program runs in a temporary folder (mgpu-compare writes its results
there) and gets a small command line that runs in milliseconds (the host
backend, a tiny grid, one repeat), and then, case by case, a few tokens
added after it: one of its own options (read from its --help) with a value
that is good, bad or odd, such an option mutated byte by byte, or junk (an
unknown option, an operand, a missing value, a long or non-UTF-8 string).
What it must hold (doc/design.md section 7):
  - no crash (no signal, no sanitizer report) and no hang (a time limit);
  - a rejection is exit 2 with exactly one line on stderr;
  - a run-time failure is exit 1 with exactly one line (mgpu-compare: any);
  - an accepted command line runs and exits 0.
Mutations never bring in letters (save x), so a valid mutated number stays
small and a size never gains a G or T suffix: accepted lines stay fast.

The cases come from a fixed seed, then from a random one, printed, so that
a failure can be repeated: MGPU_FUZZ_SEED=N replaces the random seed.
Prints TAP, one test per program, and per program a line saying how many
command lines ended how (doc/reliability.md quotes them).

Usage: fuzz-cmdline.py BUILDDIR  (environment: MGPU_FUZZ_CASES per seed)
"""
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

FIXED_SEED = 12
LIMIT_S = 30  # an accepted tiny run takes well under a second
SANITIZER_EXIT = 86  # tests/sanitize.sh: a sanitizer's report

STENCIL = ["--backend=host", "--nx=12", "--ny=10", "--steps=2", "--repeat=1", "--warmup=0"]


def programs(builddir):
    """(name, path, base command line, cases per seed) of each program built."""
    listed = [
        ("mgpu-single", "single_thread/mgpu-single", STENCIL, 1.0),
        ("mgpu-fork", "fork/mgpu-fork", STENCIL, 1.0),
        ("mgpu-pthread", "pthread/mgpu-pthread", STENCIL, 1.0),
        ("mgpu-openmp", "openmp/mgpu-openmp", STENCIL, 1.0),
        ("mgpu-streams", "streams/mgpu-streams", STENCIL, 1.0),
        # A singleton (no mpirun): MPI_Init alone costs a tenth of a second.
        ("mgpu-mpi", "mpi/mgpu-mpi", STENCIL, 0.25),
        ("mgpu-p2p", "bench/mgpu-p2p",
         ["--backend=host", "--devices=2", "--bytes=4K", "--sizes=none", "--halo=4K",
          "--rounds=2", "--latency-copies=2", "--repeat=1", "--warmup=0"], 1.0),
        # Runs mgpu-single on one device, and gnuplot where there is one.
        ("mgpu-compare", "bench/mgpu-compare",
         ["--backend=host", "--strategies=single", "--devices=1", "--nx=8", "--ny=8",
          "--steps=2", "--repeat=1", "--warmup=0", "--timeout=20", "--output=compare"], 0.4),
    ]
    for name, rel, base, share in listed:
        path = os.path.abspath(os.path.join(builddir, rel))
        if os.access(path, os.X_OK):
            yield name, path, base, share


def options_of(path):
    """{option: (placeholder or None, [the names it accepts], whether it may
    stand alone)} from --help: "--name=VALUE", "--name[=VALUE]" or "--name"."""
    out = subprocess.run([path, "--help"], capture_output=True, text=True,
                         timeout=LIMIT_S).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"  (-\S.*?)(?:\s{2,}|$)(.*)", line)
        if not m:
            continue
        choices = re.findall(r"[a-z][a-z0-9-]*(?:\|[a-z][a-z0-9-]*)+", line)
        names = choices[0].split("|") if choices else []
        for name, bare, value in re.findall(r"--([a-z][a-z0-9-]*)(?:(\[?)=(\S+?)\]?)?(?:,|\s|$)",
                                            m.group(1)):
            found[name] = (value or None, names, bool(bare) or not value)
    return found


NUMBERS = ["0", "1", "2", "3", "7", "16", "-1", "-0", "+3", "007", "1e3", "0x10", " 4", "4 ",
           "", "99999999999999999999999", "9223372036854775807", "-9223372036854775808",
           "18446744073709551616", "3.5", "\u0663", "1,2", "nan", "4x"]
SIZES = ["4K", "8K", "4", "0", "3", "1k", "4KB", "-4K", "K", "4.5K", "64K",
         "18446744073709551616K", "4096"]
NAMES = ["auto", "cuda", "host", "pattern2d", "jacobi", "table", "csv", "json", "cpu",
         "device", "none", "peer", "peer-async", "staged", "direct", "mapped", "ipc", "mpi",
         "managed", "on", "off", "runtime", "driver", "step", "persistent", "", "HOST", "hos", "host ",
         "single", "fork", "pthread", "openmp", "streams"]
LISTS = ["1", "1,2", "1-2", "2-1", "", ",", "1,,2", "0", "single", "single,single",
         "single,bogus", "peer,staged", "a" * 600, "1-99999999999"]
JUNK = ["--", "-", "", "--bogus", "--bogus=1", "-x", "-hx", "operand", "=5", "---nx=3",
        "--=", "\u00e9\u00e8", "x" * 5000, "%s%n%p", "--nx", "--help=1", "-V1",
        os.fsdecode(b"--\xff\xfe"), os.fsdecode(b"\xc3\x28")]
# What a mutation may insert or replace a byte with: no letter but x.
ALPHABET = "0123456789-=,:.x +\u00e9"


def value_for(rng, placeholder, names=()):
    """A value for an option: half the time one it accepts (a name it
    lists, a small number), else anything of its kind."""
    kind = (placeholder or "").upper()
    if rng.random() < 0.5:
        if names:
            return rng.choice(names)
        if kind == "N":
            return rng.choice(["1", "2", "3"])
    if "|" in kind or kind in ("NAME", "HOW", "MODE"):
        pool = NAMES
    elif "SIZE" in kind or kind == "MIN:MAX":
        pool = SIZES + [a + ":" + b for a in ("4K", "8K", "x") for b in ("8K", "4K", "")]
    elif "LIST" in kind:
        pool = LISTS
    elif kind in ("DIR", "FILE", "COMMAND"):
        pool = ["", "/nonexistent/x", "/dev/null", ".", "out"]  # relative: in the
        # temporary folder the programs run in
    else:
        pool = NUMBERS
    return rng.choice(pool)


def mutate(rng, token):
    """One byte-level change: delete, insert, replace, repeat or cut."""
    if not token:
        return rng.choice(ALPHABET)
    i = rng.randrange(len(token))
    op = rng.randrange(5)
    if op == 0:
        return token[:i] + token[i + 1:]
    if op == 1:
        return token[:i] + rng.choice(ALPHABET) + token[i:]
    if op == 2:
        return token[:i] + rng.choice(ALPHABET) + token[i + 1:]
    if op == 3:
        return token[:i] + token[i] + token[i:]
    return token[:i]


def tokens(rng, options, base):
    """1 to 3 tokens to add to the base command line."""
    names = sorted(options)
    added = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        if kind < 0.7:
            name = rng.choice(names)
            if name in ("help", "version"):
                name = rng.choice(names)  # printed, not run: rarer
            placeholder, choices, alone = options[name]
            if placeholder is not None and alone and rng.random() < 0.3:
                added.append("--" + name)
            elif placeholder is None:
                added.append("--" + name if rng.random() < 0.9 else
                             "--%s=%s" % (name, value_for(rng, None)))
            elif rng.random() < 0.15:
                added += ["--" + name, value_for(rng, placeholder, choices)]
            else:
                added.append("--%s=%s" % (name, value_for(rng, placeholder, choices)))
        elif kind < 0.9:
            added.append(mutate(rng, rng.choice(base + added) if added or base else ""))
        else:
            added.append(rng.choice(JUNK))
    return added


def run_case(path, args, env, cwd):
    """(exit code or 'signal N' or 'timeout', stderr lines, seconds)."""
    start = time.monotonic()
    try:
        done = subprocess.run([path] + args, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=LIMIT_S, env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        return "timeout", [], time.monotonic() - start
    code = done.returncode
    # A line is what a terminal keeps: --progress redraws one line in place
    # with carriage returns and blanks it before an error, so each line
    # counts as what follows its last carriage return.
    text = done.stderr.decode("utf-8", "replace")
    lines = [line.rsplit("\r", 1)[-1] for line in text.split("\n")]
    lines = lines[:-1] if lines and lines[-1] == "" else lines
    return (code if code >= 0 else "signal %d" % -code), lines, time.monotonic() - start


def judge(name, code, lines):
    """None when the outcome holds, else what went wrong."""
    if not isinstance(code, int):
        return code
    if code == SANITIZER_EXIT:
        return "a sanitizer's report"
    if code == 2 or (code == 1 and name != "mgpu-compare"):
        return None if len(lines) == 1 else "exit %d with %d lines on stderr" % (code, len(lines))
    return None if code in (0, 1) else "exit %d" % code


def quoted(path, args):
    return " ".join(shlex.quote(a) for a in [path] + args).encode("utf-8", "surrogateescape") \
        .decode("utf-8", "backslashreplace")


def main():
    builddir = sys.argv[1] if len(sys.argv) > 1 else "."
    cases = int(os.environ.get("MGPU_FUZZ_CASES", "40"))
    seed = int(os.environ.get("MGPU_FUZZ_SEED") or random.SystemRandom().randrange(1 << 31))
    print("# seeds: %d (fixed), %d (this run; MGPU_FUZZ_SEED=%d repeats it)"
          % (FIXED_SEED, seed, seed))
    env = dict(os.environ)
    env.pop("MGPU_INJECT_FAULT", None)
    env.pop("MGPU_P2P_CORRUPT", None)
    env["OMP_NUM_THREADS"] = "1"
    failed = 0
    count = 0
    with tempfile.TemporaryDirectory(prefix="mgpu-fuzz.") as tmp:
        env["TMPDIR"] = tmp
        for name, path, base, share in programs(builddir):
            count += 1
            if name == "mgpu-mpi":
                code, lines, _ = run_case(path, ["--version"], env, tmp)
                if code != 0:
                    print("ok %d - %s # SKIP it does not start as an MPI singleton (%s)"
                          % (count, name, code))
                    continue
            options = options_of(path)
            lines_to_try = []
            for s in (FIXED_SEED, seed):
                rng = random.Random("%s:%d" % (name, s))
                for _ in range(max(1, int(cases * share))):
                    lines_to_try.append(base + tokens(rng, options, base))
            with ThreadPoolExecutor(max_workers=2) as pool:
                results = list(pool.map(lambda a: run_case(path, a, env, tmp), lines_to_try))
            tally, problems, slowest = {}, [], 0.0
            for args, (code, lines, seconds) in zip(lines_to_try, results):
                tally[code] = tally.get(code, 0) + 1
                slowest = max(slowest, seconds)
                problem = judge(name, code, lines)
                if problem:
                    problems.append((problem, args, lines))
            summary = ", ".join("%d exit %s" % (n, c) for c, n in sorted(tally.items(),
                                                                         key=str))
            print("# %s: %d command lines (%d options from --help): %s; slowest %.2f s"
                  % (name, len(lines_to_try), len(options), summary, slowest))
            if problems:
                failed += 1
                print("not ok %d - %s: %d of %d command lines broke a rule"
                      % (count, name, len(problems), len(lines_to_try)))
                for problem, args, lines in problems[:10]:
                    print("# %s: %s" % (problem, quoted(path, args)))
                    for line in lines[:5]:
                        print("#   stderr: %s" % line)
            else:
                print("ok %d - %s: %d command lines, every rejection exit 2 with one line"
                      % (count, name, len(lines_to_try)))
    print("1..%d" % count)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
