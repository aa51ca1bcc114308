#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turn kuai_bench --json output into a PNG bar chart.

Usage: plot.py results.json out.png

One panel per cipher (uBlock members, SM4); along x the scenarios (mode,
including ctr-vs-openssl and gcm-enc/gcm-dec; the ECB sweep rows as
"mode size threads"), one bar per backend of that cipher (a backend keeps
its colour in every panel), MB/s on a log axis (short-message rows are
orders of magnitude below the long-message ones). The yardstick measured
side by side in the same run (peer_mbps) is drawn as a line across each
group that has one, one line style per peer library (SM4 rows have
libgcrypt in the row's own mode, and OpenSSL on ctr-vs-openssl), and the
best backend's ratio to it is written above the group.
"""
import json
import sys


def usage(msg=None):
    if msg:
        print(f"plot.py: {msg}", file=sys.stderr)
    print("usage: plot.py results.json out.png", file=sys.stderr)
    sys.exit(2)


def first_seen(values):
    """Unique values in the order kuai_bench wrote them (its scenario order)."""
    out = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def human(n):
    """Sizes as kuai_bench prints them: KiB for the paper's buffers, decimal
    units for the SM4 report's texts."""
    if n % 1024 == 0:
        return f"{n // 1024}KiB"
    if n % 1000000 == 0:
        return f"{n // 1000000}MB"
    if n % 1000 == 0:
        return f"{n // 1000}KB"
    return f"{n}B"


def label_rows(rows):
    """Give every row an x-axis group label. A mode measured at several
    sizes or thread counts (the ECB sweep) gets one group per combination."""
    combos = {}
    for r in rows:
        key = (r["cipher"], r["mode"])
        combos.setdefault(key, set()).add((r.get("size"), r.get("threads", 1)))
    for r in rows:
        if len(combos[(r["cipher"], r["mode"])]) > 1:
            size = r.get("size")
            size_s = human(size) if isinstance(size, int) else str(size)
            r["_group"] = f"{r['mode']} {size_s} {r.get('threads', 1)}T"
        else:
            r["_group"] = r["mode"]


def peer_parts(peer):
    """'libgcrypt-1.10 sm4-cbc-dec' -> ('libgcrypt-1.10', 'sm4-cbc', '');
    'openssl-3.0 aes-128-gcm-enc (no AES-NI)' -> ('openssl-3.0', 'aes-128-gcm',
    '(no AES-NI)'). The direction is the row's own, so the legend drops it."""
    parts = peer.split(" ", 2)
    lib = parts[0]
    algo = parts[1] if len(parts) > 1 else ""
    for suffix in ("-enc", "-dec"):
        if algo.endswith(suffix):
            algo = algo[: -len(suffix)]
    rest = parts[2] if len(parts) > 2 else ""
    return lib, algo, rest


# one line style per peer library, in the order they first appear
PEER_STYLES = [
    dict(colors="black", linestyles="solid"),
    dict(colors="dimgray", linestyles="dashed"),
    dict(colors="black", linestyles="dotted"),
]


def ratio_text(x):
    # ref backends sit far below the yardstick: keep two significant digits
    return f"×{x:.2f}" if x >= 0.1 else f"×{x:.2g}"


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        usage()
    src, dst = argv[1], argv[2]
    try:
        with open(src, encoding="utf-8") as f:
            rows = json.load(f)
    except OSError as e:
        usage(f"cannot read {src}: {e.strerror}")
    except json.JSONDecodeError as e:
        usage(f"{src} is not JSON: {e}")
    if not isinstance(rows, list) or not rows:
        usage(f"{src} holds no rows (expected a JSON array of objects)")
    for key in ("cipher", "mode", "backend", "mbps"):
        if any(key not in r for r in rows):
            usage(f"{src}: some rows lack '{key}'; is it kuai_bench --json output?")
    # the paper matrix's rows (mode "paper: ...") are a table of their own,
    # most of them against a reference from another run: not bars here
    rows = [r for r in rows if not r["mode"].startswith("paper")]
    if not rows:
        usage(f"{src} holds only the paper matrix's rows: nothing to draw")

    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed: we only write a file
        import matplotlib.pyplot as plt
    except ImportError:
        print(
            "plot.py: matplotlib is not installed for this Python.\n"
            "  python3 -m venv .venv && .venv/bin/pip install matplotlib\n"
            "  .venv/bin/python bench/plot.py results.json out.png",
            file=sys.stderr,
        )
        sys.exit(1)

    label_rows(rows)
    ciphers = first_seen(r["cipher"] for r in rows)
    all_backends = first_seen(r["backend"] for r in rows)
    libs = first_seen(peer_parts(r["peer"])[0] for r in rows if r.get("peer"))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # a backend keeps its colour across panels (SM4's differ from uBlock's)
    color_of = {b: colors[i % len(colors)] for i, b in enumerate(all_backends)}
    style_of = {lib: PEER_STYLES[i % len(PEER_STYLES)] for i, lib in enumerate(libs)}

    ngroups = max(len(first_seen(r["_group"] for r in rows if r["cipher"] == c))
                  for c in ciphers)
    fig, axes = plt.subplots(
        len(ciphers), 1, figsize=(max(16, 0.55 * ngroups), 4.4 * len(ciphers)),
        squeeze=False,
    )
    for ax, cipher in zip(axes[:, 0], ciphers):
        crow = [r for r in rows if r["cipher"] == cipher]
        modes = first_seen(r["_group"] for r in crow)
        backends = first_seen(r["backend"] for r in crow)
        width = 0.8 / max(1, len(backends))
        # bars of a group are centred on it, whatever subset of the backends
        # it has (the sweep runs on the best backend only)
        present = {
            mode: [b for b in backends
                   if any(r["_group"] == mode and r["backend"] == b for r in crow)]
            for mode in modes
        }
        for bi, backend in enumerate(backends):
            xs, ys = [], []
            for mi, mode in enumerate(modes):
                if backend not in present[mode]:
                    continue
                slot, nslots = present[mode].index(backend), len(present[mode])
                for r in crow:
                    if r["_group"] == mode and r["backend"] == backend and r["mbps"]:
                        xs.append(mi + width * (slot - (nslots - 1) / 2))
                        ys.append(r["mbps"])
            if xs:
                ax.bar(xs, ys, width, label=backend, color=color_of[backend])

        # Yardstick: it was re-measured next to every backend's row; the
        # median of those is what the line shows, the ratio is the best one.
        # Legend: one entry per library, listing the algorithms it ran in
        # this panel ("libgcrypt-1.10 sm4-ecb, sm4-cbc, sm4-ctr, sm4-gcm").
        algos_of = {}
        for r in crow:
            if r.get("peer") and r.get("peer_mbps"):
                lib, algo, rest = peer_parts(r["peer"])
                entry = algos_of.setdefault(lib, ([], rest))
                if algo not in entry[0]:
                    entry[0].append(algo)
        labelled = set()
        for mi, mode in enumerate(modes):
            mrows = [r for r in crow if r["_group"] == mode and r.get("peer_mbps")]
            if not mrows:
                continue
            lib = peer_parts(mrows[0].get("peer") or "peer")[0]
            label = None
            if lib not in labelled:
                algos, rest = algos_of.get(lib, ([], ""))
                label = f"{lib} {', '.join(algos)} {rest}".strip()
                labelled.add(lib)
            pm = median([r["peer_mbps"] for r in mrows])
            ax.hlines(pm, mi - 0.45, mi + 0.45, linewidths=2, label=label,
                      **style_of.get(lib, PEER_STYLES[0]))
            ratios = [r["ratio"] for r in mrows if r.get("ratio")]
            if ratios:
                top = max(max(r["mbps"] for r in mrows), pm)
                ax.text(mi, top * 1.25, ratio_text(max(ratios)), ha="center",
                        va="bottom", fontsize=8)

        ax.set_yscale("log")
        ax.set_ylabel("MB/s (10^6 B/s, log)")
        ax.set_title(cipher)
        ax.set_xticks(range(len(modes)))
        ax.set_xticklabels(modes, rotation=30, ha="right", fontsize=8)
        ax.set_xlim(-0.6, len(modes) - 0.4)
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, hi * 3)  # room for the ratio labels
        ax.grid(axis="y", which="major", alpha=0.3)
        # outside the axes, so it never hides a bar or a ratio label
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0))

    title = ("kuai_bench: best of N repetitions, single thread unless the label ends "
             "in 2T; lines = peer measured in the same run, alternating (SM4: the "
             "row's own mode; uBlock: AES-128-CTR, AES-128-GCM on gcm rows)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    try:
        fig.savefig(dst, dpi=110)
    except OSError as e:
        print(f"plot.py: cannot write {dst}: {e.strerror}", file=sys.stderr)
        sys.exit(1)
    print(f"plot.py: wrote {dst} ({len(rows)} rows, {len(ciphers)} ciphers)")


if __name__ == "__main__":
    main(sys.argv)
