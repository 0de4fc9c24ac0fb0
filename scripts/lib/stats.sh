# Shared by the bench scripts: the median of the figures a script collected over its rounds.
#   median VALUE...        the middle value, as written (of an even count, the lower middle)
#   median_mean VALUE...   Python's statistics.median (of an even count, the mean of the two
#                          middles), printed as Python prints a float (needs python3)

# median VALUE...: the values in numeric order (sort -n), the one at position (N + 1) / 2
# rounded down, printed as it was given: 1.2 3 2 -> 2; 4 1 3 2 -> 2.
median() { printf "%s\n" "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# median_mean VALUE...: statistics.median of the values as floats: 1 3 2 -> 2.0; 4 1 3 2 -> 2.5.
median_mean() { python3 -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
