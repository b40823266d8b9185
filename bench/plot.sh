#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# bench/plot.sh — PNG charts of a result file written by bench/compare.sh or bench/network.sh.
#
#   bench/plot.sh FILE.md [FILE.md ...]
#
# Reads the Markdown tables of each FILE and writes PNGs beside it (900x500, gnuplot's pngcairo),
# printing the path of every PNG it wrote on stdout, one a line:
#   compare.sh tables (| test | size | vkshmem | OSHMEM | unit | ratio |): one chart per test that
#     has two sizes or more, FILE-without-.md + "-<test>.png" (e.g. ...-host-heap-put_lat.png):
#     vkshmem and the peer as two lines against message size, log2 x, log10 y. Rows without a
#     size (barrier_lat "-") and tests measured at one size only (amo_fadd_lat 8 B), or with no
#     value at all, are skipped and named on stderr.
#   network.sh tables (| measurement (...) | vkshmem | raw UCX | ratio |, values "13.7 us"): every
#     measurement there is taken at one size (8 B put + quiet, 1 MiB put), so a line against size
#     would be a dot; these become bar charts, vkshmem beside the raw transport, linear y from 0,
#     the table's value on each bar: "-latency.png" for the rows in us, "-bandwidth.png" for MB/s.
# A file with more than one such table (results edited by hand) gets "-table2-..." and so on for
# the tables after the first. A file with none is named on stderr and skipped.
#
# Without gnuplot it prints a hint (scripts/setup.sh installs gnuplot-nox) and exits 0, so the
# benchmarks that call it still finish. Exit status: 0, or 1 when gnuplot failed on a chart,
# 2 for a bad command line or an unreadable file.
set -u
set -o pipefail

usage() {
    sed -n '3,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

files=()
while (($#)); do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --) shift; files+=("$@"); break ;;
        -*) echo "plot.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
        *) files+=("$1"); shift ;;
    esac
done
((${#files[@]})) || { echo "plot.sh: no result file given (try --help)" >&2; exit 2; }
for f in "${files[@]}"; do
    [[ -r "$f" ]] || { echo "plot.sh: cannot read '$f'" >&2; exit 2; }
done
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "plot.sh: gnuplot not found, no PNGs written (run scripts/setup.sh: it installs gnuplot-nox)" >&2
    exit 0
fi

# parse FILE: the charts of FILE as records of fields separated by \037 (with tabs, bash's read
# would merge empty fields), every text already escaped for a gnuplot double-quoted string
# (backslash, double quote; backquotes, which gnuplot runs as commands even there, become '):
#   C  line|bars  suffix  title  ylabel  name-of-vkshmem-column  name-of-peer-column
#   P  x  a  b  xtic-label  a-as-written  b-as-written     (a, b: NaN where the table has none)
#   E
#   S  skipped tests, comma-separated
parse() {
    awk -v base="$(basename "$1")" '
        function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
        function gq(s,    out, i, c) {
            out = ""
            for (i = 1; i <= length(s); i++) {
                c = substr(s, i, 1)
                if (c == "`") c = "\047"
                if (c == "\\" || c == "\"") out = out "\\"
                out = out c
            }
            return out
        }
        # "8 B", "1 KiB", "4 MiB", "1024" -> bytes; "" when the text is not a size.
        function bytes(s,    n, m) {
            s = trim(s)
            if (s ~ /^[0-9]+$/) return s + 0
            if (s !~ /^[0-9.]+ (B|KiB|MiB|GiB)$/) return ""
            n = s; sub(/ .*/, "", n)
            m = s; sub(/^[^ ]* /, "", m)
            return n * ((m == "B") ? 1 : (m == "KiB") ? 1024 : (m == "MiB") ? 1048576 : 1073741824)
        }
        function human(b) {
            if (b >= 1073741824 && b % 1073741824 == 0) return (b / 1073741824) " GiB"
            if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
            if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
            return b " B"
        }
        function num(s) {
            s = trim(s)
            return (s ~ /^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/) ? s : "NaN"
        }
        function ylabel(unit) {
            if (unit == "us") return "latency (µs)"
            if (unit == "MB/s") return "bandwidth (MB/s, 10^6 bytes/s)"
            return unit
        }
        # Splits a network.sh label into lines of about 30 characters, "(raw: ...)" on its own.
        function wrap(s,    parts, np, i, words, nw, j, line, out) {
            gsub(/ \(/, "\001(", s)
            np = split(s, parts, "\001")
            out = ""
            for (i = 1; i <= np; i++) {
                nw = split(parts[i], words, " ")
                line = ""
                for (j = 1; j <= nw; j++) {
                    if (line != "" && length(line) + 1 + length(words[j]) > 30) {
                        out = out (out == "" ? "" : "\\n") line
                        line = words[j]
                    } else {
                        line = (line == "" ? "" : line " ") words[j]
                    }
                }
                if (line != "") out = out (out == "" ? "" : "\\n") line
            }
            return out
        }
        # Table cells, trimmed, into cell[1..n]; returns n.
        function cells(line,    raw, n, i) {
            sub(/^[ \t]*\|/, "", line); sub(/\|[ \t]*$/, "", line)
            n = split(line, raw, "|")
            for (i = 1; i <= n; i++) cell[i] = trim(raw[i])
            return n
        }
        heading == "" && /^# / { heading = substr($0, 3) }
        machine == "" && /Machine: / {
            machine = $0; sub(/^.*Machine: */, "", machine)
            sub(/ \(.*$/, "", machine); sub(/[ ,]+$/, "", machine)
        }
        !/^[ \t]*\|/ { in_table = 0; if ($0 ~ /[^ \t]/) last_text = $0; next }
        /^[ \t]*\|[-:| \t]+\|[ \t]*$/ { next }
        !in_table {
            in_table = 1; fmt = ""
            n = cells($0)
            if (n >= 6 && cell[1] == "test" && cell[2] == "size" && cell[5] == "unit") fmt = "compare"
            else if (n == 4 && cell[1] ~ /^measurement/ && cell[4] == "ratio") fmt = "network"
            if (fmt == "") next
            t = ++ntables
            tfmt[t] = fmt; name_a[t] = cell[3 - (fmt == "network")]; name_b[t] = cell[4 - (fmt == "network")]
            setting[t] = ""
            if (cell[1] ~ /\(.*\)/) { setting[t] = cell[1]; sub(/^[^(]*\(/, "", setting[t]); sub(/\)[^)]*$/, "", setting[t]) }
            # A later table of a file edited by hand: the sentence before it says what it is.
            if (setting[t] == "" && t > 1) { setting[t] = last_text; sub(/:[ \t]*$/, "", setting[t]) }
            next
        }
        fmt == "compare" {
            cells($0)
            test = cell[1]; size = bytes(cell[2])
            if (!((t, test) in seen)) { seen[t, test] = 1; tests[t, ++ntests[t]] = test; unit[t, test] = cell[5] }
            if (size == "") next
            k = ++npts[t, test]
            px[t, test, k] = size; pa[t, test, k] = num(cell[3]); pb[t, test, k] = num(cell[4])
            sa[t, test, k] = cell[3]; sb[t, test, k] = cell[4]
            next
        }
        fmt == "network" {
            cells($0)
            label = cell[1]; va = cell[2]; vb = cell[3]
            u = (va != "") ? va : vb; sub(/^[^ ]* */, "", u)
            if (u == "") next
            sub(/ .*/, "", va); sub(/ .*/, "", vb)
            if (!((t, u) in useen)) { useen[t, u] = 1; units[t, ++nunits[t]] = u }
            k = ++nbars[t, u]
            blabel[t, u, k] = label; ba[t, u, k] = num(va); bb[t, u, k] = num(vb)
            bsa[t, u, k] = va; bsb[t, u, k] = vb
            next
        }
        END {
            where = base (machine != "" ? " — " machine : "")
            skipped = ""
            for (t = 1; t <= ntables; t++) {
                tag = (t > 1) ? "-table" t : ""
                ttag = (t > 1) ? " (table " t " of the file)" : ""
                if (tfmt[t] == "compare") {
                    for (i = 1; i <= ntests[t]; i++) {
                        test = tests[t, i]; n = npts[t, test]
                        valid = 0   # a half that failed shows n/a on every row
                        for (j = 1; j <= n; j++) valid += (pa[t, test, j] != "NaN") + (pb[t, test, j] != "NaN")
                        if (n < 2 || valid == 0) { skipped = skipped (skipped == "" ? "" : ", ") test; continue }
                        # by size (insertion sort; a few dozen rows at most)
                        for (j = 1; j <= n; j++) o[j] = j
                        for (j = 2; j <= n; j++) {
                            x = o[j]; m = j - 1
                            while (m >= 1 && px[t, test, o[m]] > px[t, test, x]) { o[m + 1] = o[m]; m-- }
                            o[m + 1] = x
                        }
                        title = gq(test ": " heading ttag) "\\n" gq(where)
                        printf "C\037line\037%s\037%s\037%s\037%s\037%s\n", tag "-" test, title, ylabel(unit[t, test]),
                            gq(name_a[t]), gq(name_b[t])
                        for (j = 1; j <= n; j++) {
                            k = o[j]
                            printf "P\037%s\037%s\037%s\037%s\037%s\037%s\n", px[t, test, k], pa[t, test, k], pb[t, test, k],
                                human(px[t, test, k]), gq(sa[t, test, k]), gq(sb[t, test, k])
                        }
                        print "E"
                    }
                } else {
                    for (i = 1; i <= nunits[t]; i++) {
                        u = units[t, i]
                        what = (u == "us") ? "latency" : (u == "MB/s") ? "bandwidth" : u
                        gsub(/[^A-Za-z0-9_]/, "_", what)
                        title = gq(heading ttag) (setting[t] != "" ? "\\n" gq(setting[t]) : "") "\\n" gq(where)
                        printf "C\037bars\037%s\037%s\037%s\037%s\037%s\n", tag "-" what, title,
                            ylabel(u), gq(name_a[t]), gq(name_b[t])
                        for (k = 1; k <= nbars[t, u]; k++)
                            printf "P\037%d\037%s\037%s\037%s\037%s\037%s\n", k, ba[t, u, k], bb[t, u, k],
                                wrap(gq(blabel[t, u, k])), gq(bsa[t, u, k]), gq(bsb[t, u, k])
                        print "E"
                    }
                }
            }
            if (skipped != "") printf "S\037%s\n", skipped
        }' "$1"
}

# gnuplot commands for one chart; reads the globals set by the loop below.
chart_script() {
    local n=${#px[@]} i tics="" step yadd
    cat <<EOF
set encoding utf8
set terminal pngcairo size 900,500 font "DejaVu Sans,10" noenhanced
set output "$(gq_path "$png")"
set title "$title"
set ylabel "$ylab"
set grid xtics ytics mytics lc rgb "#c8c8c8" lw 1
set key below horizontal reverse Left width 2
set style line 1 lc rgb "#1f5fb4" lw 2 pt 7 ps 1.0
set style line 2 lc rgb "#e8710a" lw 2 pt 5 ps 1.0 dt 2
set datafile missing "NaN"
\$d << EOD
EOF
    for ((i = 0; i < n; i++)); do
        # An empty quoted field would end the line for gnuplot; its y is NaN anyway.
        printf '%s %s %s "%s" "%s"\n' "${px[i]}" "${pa[i]}" "${pb[i]}" "${psa[i]:-n/a}" "${psb[i]:-n/a}"
    done
    echo "EOD"
    if [[ $kind == line ]]; then
        # Label at most about ten sizes; the others get an unlabelled tic.
        step=$(((n + 9) / 10))
        for ((i = 0; i < n; i++)); do
            local lab=""
            ((i % step == 0)) && lab=${plab[i]}
            tics+="${tics:+, }\"$lab\" ${px[i]}"
        done
        cat <<EOF
set xlabel "message size (log2 scale)" offset 0, 0.2
set logscale x 2
set logscale y 10
set format y "%.10g"
set mytics 10
set xtics ($tics)
set xrange [${px[0]} / 1.4 : ${px[n - 1]} * 1.4]
EOF
        # Within two decades y would show one or two labels: label 2 and 5 as well.
        yadd=$(printf '%s\n' "${pa[@]}" "${pb[@]}" | awk '
            $1 != "NaN" && $1 > 0 { if (min == "" || $1 < min) min = $1; if ($1 > max) max = $1 }
            END {
                if (min == "" || max / min > 100) exit
                s = ""
                for (e = int(log(min) / log(10)) - 1; e <= int(log(max) / log(10)) + 1; e++)
                    for (m = 2; m <= 5; m += 3) {
                        v = m * 10 ^ e
                        if (v >= min / 2 && v <= max * 2) s = s (s == "" ? "" : ", ") sprintf("\"%g\" %g", v, v)
                    }
                print s
            }')
        [[ -z $yadd ]] || echo "set ytics add ($yadd)"
        cat <<EOF
plot \$d using 1:2 with linespoints ls 1 title "$name_a", \\
     \$d using 1:3 with linespoints ls 2 title "$name_b"
EOF
    else
        for ((i = 0; i < n; i++)); do tics+="${tics:+, }\"${plab[i]}\" ${px[i]}"; done
        cat <<EOF
set xtics ($tics) scale 0
set xrange [$((n < 3 ? (3 - n) : 0)) * -0.5 + 0.5 : $n + 0.5 + $((n < 3 ? (3 - n) : 0)) * 0.5]
set yrange [0 : *]
set offsets 0, 0, graph 0.12, 0
set boxwidth 0.34
set style fill solid 0.85 noborder
set grid noxtics ytics
set bmargin 5.5
plot \$d using (\$1 - 0.18):2 with boxes lc rgb "#1f5fb4" title "$name_a", \\
     \$d using (\$1 + 0.18):3 with boxes lc rgb "#e8710a" title "$name_b", \\
     \$d using (\$1 - 0.18):2:4 with labels offset 0, 0.8 notitle, \\
     \$d using (\$1 + 0.18):3:5 with labels offset 0, 0.8 notitle
EOF
    fi
}

gq_path() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; echo "${s//\`/\\\`}"; }

status=0
for file in "${files[@]}"; do
    stem=${file%.md}
    ncharts=0 nskipped=0
    kind="" suffix="" title="" ylab="" name_a="" name_b=""
    px=() pa=() pb=() plab=() psa=() psb=()
    while IFS=$'\037' read -r tag f1 f2 f3 f4 f5 f6; do
        case "$tag" in
            C) kind=$f1 suffix=$f2 title=$f3 ylab=$f4 name_a=$f5 name_b=$f6
               px=() pa=() pb=() plab=() psa=() psb=() ;;
            P) px+=("$f1") pa+=("$f2") pb+=("$f3") plab+=("$f4") psa+=("$f5") psb+=("$f6") ;;
            E) png="$stem$suffix.png"
               if err=$(chart_script | gnuplot 2>&1) && [[ -s "$png" ]]; then
                   echo "$png"
                   ncharts=$((ncharts + 1))
               else
                   echo "plot.sh: gnuplot failed on $png: $err" >&2
                   status=1
               fi ;;
            S) echo "plot.sh: $file: not plotted (one size or none, or no values): $f1" >&2
               nskipped=1 ;;
        esac
    done < <(parse "$file")
    ((ncharts || nskipped || status)) ||
        echo "plot.sh: $file: no compare.sh or network.sh table with message sizes; nothing plotted" >&2
done
exit "$status"
