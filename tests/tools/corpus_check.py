#!/usr/bin/env python3
"""Checks what `perfkit diagnose` says of the corpus' captures against the
expectations written before they were captured (tests/gpu/programs/
expected.json; EXPECTED.md defines every key).

  corpus_check.py PERFKIT [--only NAME,...] [--require CHECK,...] [--known FILE]

For each program with a capture (tests/data/corpus/NAME.sqlite, or the
entry's `fixture` without its .xz), prints one line per check: the
program, the check, `ok` or `FAIL`, and what diagnose said. Checks:

  step       diagnose found a window with GPU work in it
  first      the first finding of medium or high severity is one of
             first_finding_any_of (`none`: no such finding is right too)
  change     the first such finding's change mentions one of
             first_change_mentions_any_of
  not_advice no finding's change mentions advice_must_not_mention
  not_rule   no finding is one of findings_must_not_include
  order      for each [a, b] of ranks_before found both, a comes first
  bound      the verdict's bound is `bound` or one of `bound_also` (only
             where diagnose gives a verdict)
  gain       for each of `pair`/`pairs` naming a `gain_rule`: the step
             that rule's finding predicts for its change
             (gain.step_ns_after) is within 25% of the pair's measured
             step (its verdict's step_ns)

Exit status: 1 when a check named in --require failed for a program named
in --only (all programs when --only is not given), else 0. Without
--require nothing fails: the table is the report. --known names a file of
the disagreements still open, one `NAME CHECK  why` a line (# comments):
those fail as `open` without failing the run, and one of them that passes
fails the run (`closed`), so that the file says what is still open."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERIOUS = ("medium", "high")


def capture_of(name, entry):
    fixture = entry.get("fixture")
    if fixture:
        path = os.path.join(ROOT, fixture)
        return path[:-3] if path.endswith(".xz") else path
    return os.path.join(ROOT, "tests", "data", "corpus", name + ".sqlite")


def diagnose(perfkit, path):
    out = subprocess.run([perfkit, "diagnose", "--format=json", path],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1:] or ["exit %d" % out.returncode]
    return json.loads(out.stdout), None


def job_findings(report):
    """A job's diagnosis holds its own findings and each rank's; a single
    capture's only its own. Both are read as one ordered list."""
    findings = list(report.get("findings", []))
    for rank in report.get("ranks", []) or []:
        findings.extend(rank.get("findings", []))
    return findings


GAIN_TOLERANCE = 0.25


def ms(ns):
    return "%.3f ms" % (ns / 1e6)


def pairs_of(entry):
    return entry.get("pairs") or ([entry["pair"]] if entry.get("pair") else [])


def gain_check(pair, report, reports):
    """(ok, said) of the pair's predicted against its measured step."""
    rule = pair["gain_rule"]
    other = reports.get(pair.get("with"))
    measured = ((other or {}).get("verdict") or {}).get("step_ns")
    step = (report.get("verdict") or {}).get("step_ns")
    finding = next((f for f in job_findings(report) if f["rule"] == rule), None)
    if not measured or not step:
        return False, "no verdict step for %s or %s" % (pair.get("with"), "this program")
    if finding is None or not finding.get("gain"):
        return False, "%s has no %s finding with a gain; the pair measures %s" % (
            "this program", rule, ms(measured))
    predicted = finding["gain"]["step_ns_after"]
    error = (predicted - measured) / measured
    return abs(error) <= GAIN_TOLERANCE, "%s: %s -> predicted %s, %s measured %s (%+.0f%%)" % (
        rule, ms(step), ms(predicted), pair["with"], ms(measured), 100 * error)


def check(name, entry, report, reports):
    results = []
    findings = job_findings(report)
    serious = [f for f in findings if f.get("severity") in SERIOUS]
    window = report.get("window") or {}
    busy = window.get("gpu_busy_ns")
    results.append(("step", busy is None or busy > 0,
                    "%s, GPU busy %s ns" % (window.get("source", "no window"), busy)))

    want = entry.get("first_finding_any_of")
    if want:
        first = serious[0]["rule"] if serious else "none"
        results.append(("first", first in want, "first %s; expected %s" % (first, "/".join(want))))
        words = entry.get("first_change_mentions_any_of")
        if words and serious:
            change = serious[0].get("change", "").lower()
            results.append(("change", any(w in change for w in words),
                            "%s: %s" % (serious[0]["rule"], change[:90])))

    banned = entry.get("advice_must_not_mention", [])
    said = [(f["rule"], w) for f in findings for w in banned if w in f.get("change", "").lower()]
    results.append(("not_advice", not said,
                    ", ".join("%s says %r" % s for s in said) or "none of %d banned words" % len(banned)))

    rules = [f["rule"] for f in findings]
    bad = [r for r in entry.get("findings_must_not_include", []) if r in rules]
    if entry.get("findings_must_not_include"):
        results.append(("not_rule", not bad, ", ".join(bad) or "none"))

    for a, b in entry.get("ranks_before", []):
        if a in rules and b in rules:
            results.append(("order", rules.index(a) < rules.index(b),
                            "%s at %d, %s at %d" % (a, rules.index(a) + 1, b, rules.index(b) + 1)))
        else:
            results.append(("order", a in rules or b not in rules,
                            "%s %s, %s %s" % (a, "found" if a in rules else "missing",
                                              b, "found" if b in rules else "missing")))

    verdict = report.get("verdict")
    if verdict:
        ok = verdict.get("bound") in [entry["bound"]] + entry.get("bound_also", [])
        results.append(("bound", ok, "%s; expected %s" % (verdict.get("bound"), entry["bound"])))
    for pair in pairs_of(entry):
        # a twin not captured yet has nothing to check against
        if pair.get("gain_rule") and reports.get(pair.get("with")):
            results.append(("gain",) + gain_check(pair, report, reports))
    return results


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    perfkit = argv[1]
    only, require, known = None, set(), {}
    args = argv[2:]
    while args:
        opt = args.pop(0)
        if opt == "--only" and args:
            only = set(args.pop(0).split(","))
        elif opt == "--require" and args:
            require = set(args.pop(0).split(","))
        elif opt == "--known" and args:
            with open(args.pop(0)) as f:
                for line in f:
                    words = line.split("#", 1)[0].split()
                    if len(words) >= 2:
                        known[(words[0], words[1])] = False
        else:
            print("corpus_check: unknown option %s" % opt, file=sys.stderr)
            return 2
    # CORPUS_EXPECTED: another expectations file (the test of this checker)
    with open(os.environ.get("CORPUS_EXPECTED") or
              os.path.join(ROOT, "tests", "gpu", "programs", "expected.json")) as f:
        programs = json.load(f)["programs"]
    failed = 0
    reports, errors = {}, {}
    for name, entry in programs.items():
        wanted = only is None or name in only or any(
            p.get("with") == name for n, e in programs.items() if n in only for p in pairs_of(e))
        path = capture_of(name, entry)
        if wanted and os.path.exists(path):
            reports[name], errors[name] = diagnose(perfkit, path)
    for name, entry in programs.items():
        if only is not None and name not in only:
            continue
        path = capture_of(name, entry)
        if not os.path.exists(path):
            print("%-24s %-10s %-6s no capture at %s" % (name, "-", "skip", os.path.relpath(path, ROOT)))
            continue
        report, error = reports[name], errors[name]
        if report is None:
            print("%-24s %-10s %-6s diagnose failed: %s" % (name, "run", "FAIL", error[0]))
            failed += 1
            continue
        for what, ok, said in check(name, entry, report, reports):
            is_known = (name, what) in known
            if is_known:
                known[(name, what)] = True
            verdict = ("closed" if is_known else "ok") if ok else ("open" if is_known else "FAIL")
            print("%-24s %-10s %-6s %s" % (name, what, verdict, said))
            if what in require and verdict in ("FAIL", "closed"):
                failed += 1
    for (name, what), seen in known.items():
        if not seen and (only is None or name in only):
            print("%-24s %-10s %-6s %s" % (name, what, "stale", "listed as open, not checked"))
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
