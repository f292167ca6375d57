#!/usr/bin/env python3
"""docs_agree_with_help.py - every default `perfkit CMD --help` states is the
one the documentation states, and every option --help lists is documented.

    docs_agree_with_help.py PERFKIT SOURCE_DIR

For each command of `perfkit --list-cmds`, each option line of its --help
that says "(default X ...)" gives X (up to ';', ')' or ', '). Then:
- docs/commands.md has a section "## perfkit CMD" whose table has a row for
  every long option of the help; a row whose help states a default says
  "default" and the same X, and a row of an option whose help states none
  says no default (so that neither side can gain or change one alone);
- a line of README.md that names the option and says "default" says X;
- a paragraph of docs/*.md that starts with the option (`--trace` ...) and
  says "default" says X.
Numbers are compared without thousands separators (10,000 is 10000).
Prints one line per disagreement and exits 1 if there is any."""
import os
import re
import subprocess
import sys

OPTION_LINE = re.compile(r"^\s+(?:-(\S), )?--([A-Za-z0-9-]+)(\S*)(?:\s+(.*))?$")
DEFAULT = re.compile(r"\(default:? ([^;)]*?)(?:, |;|\))")


def norm(text):
    """Thousands separators and code quotes do not change a value."""
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", text).replace("`", "")


def help_options(perfkit, cmd):
    """{long name: default or None} of the options `perfkit CMD --help` lists."""
    out = subprocess.run([perfkit, cmd, "--help"], capture_output=True, text=True, check=True).stdout
    options = {}
    for line in out.splitlines():
        m = OPTION_LINE.match(line)
        if not m or m.group(2) == "help":
            continue
        d = DEFAULT.search(m.group(4) or "")
        options[m.group(2)] = d.group(1).strip() if d else None
    return options


def sections(text):
    """{command: its section of docs/commands.md}, by "## perfkit CMD" headings."""
    found, name, lines = {}, None, []
    for line in text.splitlines():
        m = re.match(r"^## `?perfkit ([a-z]+)", line)
        if m or line.startswith("## "):
            if name:
                found[name] = lines
            name, lines = (m.group(1) if m else None), []
        elif name:
            lines.append(line)
    if name:
        found[name] = lines
    return found


def option_row(lines, option):
    """The table row whose first cell names --option."""
    for line in lines:
        if not line.startswith("|"):
            continue
        first = line.split("|")[1]
        if re.search(r"--" + re.escape(option) + r"(?![A-Za-z0-9-])", first):
            return line
    return None


def says_default(text, value):
    """text says "default" and value, as a word of its own (4 is not 40, and
    cuda,nvtx is not cuda,nvtx,um)."""
    text = norm(text)
    return "default" in text and re.search(
        r"(?<![A-Za-z0-9.,-])" + re.escape(norm(value)) + r"(?![A-Za-z0-9]|[,-][A-Za-z0-9])",
        text) is not None


def main():
    perfkit, source = sys.argv[1], sys.argv[2]
    problems = []
    commands = subprocess.run([perfkit, "--list-cmds"], capture_output=True, text=True,
                              check=True).stdout.split()
    with open(os.path.join(source, "docs", "commands.md")) as f:
        doc = sections(f.read())
    with open(os.path.join(source, "README.md")) as f:
        readme = f.read().splitlines()
    paragraphs = []
    docs_dir = os.path.join(source, "docs")
    for name in sorted(os.listdir(docs_dir)):
        if name.endswith(".md"):
            with open(os.path.join(docs_dir, name)) as f:
                paragraphs += [(name, p) for p in re.split(r"\n\s*\n", f.read())]
    defaults = {}  # option: the defaults its commands' help states
    checked = 0
    for cmd in commands:
        if cmd not in doc:
            problems.append(f"docs/commands.md has no section '## perfkit {cmd}'")
            continue
        for option, value in help_options(perfkit, cmd).items():
            row = option_row(doc[cmd], option)
            if row is None:
                problems.append(f"docs/commands.md, perfkit {cmd}: no row for --{option}")
                continue
            checked += 1
            if value is None and DEFAULT.search(row.split("|", 2)[2]):
                problems.append(f"perfkit {cmd} --{option}: docs/commands.md states a default, "
                                f"--help none: {row.strip()}")
            if value is not None:
                defaults.setdefault(option, set()).add(value)
                if not says_default(row.split("|", 2)[2], value):
                    problems.append(f"perfkit {cmd} --{option}: --help says default '{value}', "
                                    f"docs/commands.md says: {row.strip()}")
    for option, values in sorted(defaults.items()):
        named = re.compile(r"--" + re.escape(option) + r"(?![A-Za-z0-9-])")
        for n, line in enumerate(readme, 1):
            if named.search(line) and "default" in line and \
                    not any(says_default(line, v) for v in values):
                problems.append(f"README.md:{n}: --{option}'s default is not "
                                f"{' or '.join(sorted(values))}: {line.strip()}")
        for name, p in paragraphs:
            if re.match(r"^`--" + re.escape(option) + r"(?![A-Za-z0-9-])", p.strip()) and \
                    "default" in p and not any(says_default(p, v) for v in values):
                problems.append(f"docs/{name}: the paragraph on --{option} does not say its "
                                f"default {' or '.join(sorted(values))}: {p.strip()[:120]}...")
    for p in problems:
        print("FAIL:", p)
    print(f"{checked} options of {len(commands)} commands checked, "
          f"{sum(len(v) for v in defaults.values())} defaults")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
