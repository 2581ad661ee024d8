"""bench/benchlib.py — shared tables and charts for bench/tunnel, bench/seeds and bench/soak.

Rows are TSV lines written by the shell benches (bench/lib.sh): '-' stands for "not
measured". Figures are medians over alternating rounds; ratios are taken per round against
the baseline of the same round, then their median is reported.
"""
import os
import shutil
import statistics
import subprocess
import tempfile


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def read_tsv(path, fields):
    """Each line → dict over `fields` (numbers parsed where they parse, '-' → None)."""
    rows = []
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        if len(parts) < len(fields):
            parts += ["-"] * (len(fields) - len(parts))
        rows.append({f: (num(p) if num(p) is not None else (None if p == "-" else p))
                     for f, p in zip(fields, parts)})
    return rows


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(v, spec=".2f"):
    return "–" if v is None else format(v, spec)


def ratio_median(rows, key, value, base_label, label_field="label", round_field="round"):
    """Median over rounds of rows[value] / baseline[value] of the same round and key."""
    base = {(r[round_field], key(r)): r[value] for r in rows if r[label_field] == base_label}
    out = {}
    for r in rows:
        b = base.get((r[round_field], key(r)))
        if r[value] is not None and b:
            out.setdefault((r[label_field], key(r)), []).append(r[value] / b)
    return {k: med(v) for k, v in out.items()}


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def bar_chart(png, title, panels, width=1200, height=460):
    """panels: [(panel title, ylabel, labels, [(series name, [values])], logscale)] → PNG via
    gnuplot (clustered bars). Returns a message saying what was written or why not."""
    gp = shutil.which("gnuplot")
    if not gp:
        return "no chart: gnuplot is not installed (scripts/deps.sh installs gnuplot-nox)"
    tmp = tempfile.mkdtemp(prefix="ofld-chart-")
    script = [f"set terminal pngcairo size {width},{height} font ',9'", f"set output '{png}'", "set termoption noenhanced",
              f"set multiplot layout 1,{len(panels)} title '{title}'",
              "set style data histograms", "set style histogram clustered gap 1",
              "set style fill solid 0.85 border -1", "set grid ytics", "set key top right opaque",
              "set xtics rotate by -35 left", "set bmargin 7"]
    for i, (ptitle, ylabel, labels, series, logy) in enumerate(panels):
        dat = os.path.join(tmp, f"p{i}.dat")
        with open(dat, "w") as f:
            for j, lab in enumerate(labels):
                vals = [s[1][j] for s in series]
                f.write('"%s" %s\n' % (lab.replace('"', "'"),
                                       " ".join("0" if v is None else repr(v) for v in vals)))
        script += [f"set title '{ptitle}'", f"set ylabel '{ylabel}'",
                   "set logscale y" if logy else "unset logscale y",
                   "set yrange [*:*]" if logy else "set yrange [0:*]"]
        plots = []
        for k, (name, _) in enumerate(series):
            col = k + 2
            src = f"'{dat}'" if k == 0 else "''"
            plots.append(f"{src} using {col}:xtic(1) title '{name}'" if k == 0
                         else f"{src} using {col} title '{name}'")
        script.append("plot " + ", ".join(plots))
    script.append("unset multiplot")
    r = subprocess.run([gp], input="\n".join(script) + "\n", text=True, capture_output=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return f"chart: {png}" if r.returncode == 0 else "gnuplot failed: " + r.stderr.strip()[:300]
