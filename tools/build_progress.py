"""Progress for `make setup` while pip builds the C++ (the first build takes minutes).

    pip install -v ... . 2>&1 | python tools/build_progress.py build/install.log

Every line of pip's verbose output goes to the log; on the screen go scikit-build-core's stage lines
(`*** Building project with Ninja...`) and ninja's steps `[k/N] Building CXX object ...`: on a terminal
one line rewritten in place, elsewhere (CI, a pipe) one line per tenth of the steps. The exit status
is the caller's business (the Makefile sets pipefail and shows the log's end when pip fails)."""
import re
import shutil
import sys

STEP = re.compile(r"^\s*\[(\d+)/(\d+)\]\s*(.*)$")


def main(log_path: str) -> None:
    tty = sys.stdout.isatty()
    width = shutil.get_terminal_size((100, 20)).columns - 1
    shown_tenth, open_line = -1, False
    with open(log_path, "w", encoding="utf-8", errors="replace") as log:
        for line in sys.stdin:
            log.write(line)
            text = line.strip()           # pip indents its build output
            step = STEP.match(text)
            if step:
                k, n, what = int(step[1]), int(step[2]), step[3]
                if tty:
                    sys.stdout.write("\r" + f"  C++ build [{k}/{n}] {what}"[:width].ljust(width))
                    open_line = True
                elif k * 10 // n > shown_tenth:
                    shown_tenth = k * 10 // n
                    print(f"  C++ build: step {k} of {n}")
            elif text.startswith("*** "):
                if open_line:
                    sys.stdout.write("\n")
                    open_line = False
                print("  " + text[4:])
            else:
                continue
            sys.stdout.flush()
    if open_line:
        sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
