#!/usr/bin/env bash
# docs/rdl.1 and the tool agree: rdl(1)'s man page against `rdl --help`,
# each `rdl COMMAND --help`, the option strings of tools/rdl/*.c and the
# exit codes of tools/rdl/cli.h. No server: one case per CTest test.
#
#   bash tests/cli/test_manpage.sh PATH/TO/rdl SOURCE_DIR CASE
#
# Cases:
#   help        rdl --help, rdl -h and every command's --help and -h exit 0
#               and print a usage on stdout
#   commands    the commands of rdl --help, of main.c's dispatch, of the
#               man page's SYNOPSIS and of its COMMANDS section are the same
#   options     each command's options in its --help are in its SYNOPSIS
#               line and the other way round; the global and TLS options
#               of rdl --help are those of GLOBAL OPTIONS and TLS OPTIONS;
#               RUN OPTIONS and LS AND TOP OPTIONS are those of the
#               synopses; every option string the source compares is in
#               the man page and in a --help. Every option of the man page
#               is taken by the tool: `rdl [COMMAND] OPTION [VALUE] --help`
#               exits 0 (parsing stops at --help, before any connection),
#               where an unknown option exits 64.
#   exit_codes  the codes of EXIT STATUS are the tool's (cli.h's EXIT_*,
#               0, 128 + a signal) and every one of the tool's is there;
#               the codes the --help texts name are the tool's; bad usage
#               exits 64 and an unreachable server 69, as the page says.
#
# Prints "PASS: CASE" (CTest's pass condition) or "FAIL (CASE): ..." on
# stderr and exits 1.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 PATH/TO/rdl SOURCE_DIR CASE" >&2
    exit 2
fi
rdl=$1
src=$2
case_name=$3
man=$src/docs/rdl.1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/manpage.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The tool's defaults must not come from the environment the test runs in.
unset RDL_URL

fail() {
    echo "FAIL ($case_name): $*" >&2
    exit 1
}

# ---- The man page as text -------------------------------------------------

# The page with its font changes and escapes turned into plain characters;
# request lines (.TP, .B ...) are kept, so sections can be found.
man_plain() {
    sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\e/\\/g' \
        -e 's/\\(em/--/g' -e 's/\\&//g' "$man"
}

# man_raw_section NAME: the lines of section .SH NAME, requests kept.
man_raw_section() {
    man_plain | awk -v want="$1" '
        /^\.SH / {
            name = substr($0, 5)
            gsub(/"/, "", name)
            on = (name == want)
            next
        }
        on'
}

# man_section NAME: the same, requests stripped to their text
# (".B --json" -> "--json"; ".TP" and others -> "").
man_section() {
    man_raw_section "$1" | awk '
        {
            if ($0 ~ /^\.(B|I|BR|IR|RB|RI) /)
                sub(/^\.[A-Z]+ /, "")
            else if ($0 ~ /^\./)
                $0 = (($0 ~ /^\.br/) ? ".br" : "")
            print
        }'
}

# The SYNOPSIS as one line per form (the page separates them with .br).
synopsis_forms() {
    man_section SYNOPSIS | awk '
        /^\.br/ { print line; line = ""; next }
        { line = line (line == "" ? "" : " ") $0 }
        END { if (line != "") print line }'
}

# synopsis_of COMMAND: the SYNOPSIS form of COMMAND.
synopsis_of() {
    synopsis_forms | awk -v cmd="$1" '
        { rest = $0; sub(/^rdl \[GLOBAL OPTIONS\] /, "", rest) }
        rest ~ ("^" cmd "( |$)") { print; found = 1 }
        END { exit !found }'
}

# options: the option words (-x, --long-name) of stdin, one a line,
# sorted, each once. An option starts a line or follows a blank, [, |, (
# or a quote: "read-write" has none.
options() {
    grep -oE -- "(^|[][ |(,'\"])--?[a-z][a-z0-9-]*" |
        sed -E "s/^[][ |(,'\"]//" | LC_ALL=C sort -u
}

# ---- The tool -------------------------------------------------------------

# help_of [COMMAND]: the usage text on stdout (it must exit 0).
help_of() {
    local rc=0
    "$rdl" "$@" --help >"$tmp/help" 2>"$tmp/help.err" || rc=$?
    [ $rc -eq 0 ] || fail "rdl $* --help exited $rc: $(cat "$tmp/help.err")"
    cat "$tmp/help"
}

# help_options [COMMAND]: the options a --help text gives: in its usage
# (from "usage:" to the first blank line) and in its option list (lines
# that start with blanks and an option); not those named in prose.
help_options() {
    help_of "$@" | awk '
        /^usage:/ { usage = 1 }
        usage && /^$/ { usage = 0 }
        usage { print; next }
        /^  +-/ { print }' | options
}

# The commands of rdl --help (the lines under "commands:").
help_commands() {
    help_of | awk '
        /^commands:/ { on = 1; next }
        on && /^$/ { exit }
        on { print $1 }' | LC_ALL=C sort
}

# The commands main() dispatches: strcmp(argv[i], "NAME").
source_commands() {
    grep -oE 'strcmp\(argv\[i\], "[a-z]+"\)' "$src/tools/rdl/main.c" |
        sed -E 's/.*"([a-z]+)".*/\1/' | LC_ALL=C sort -u
}

# The option strings the source compares arguments with, except "--" (the
# end of options, not an option).
source_options() {
    grep -ohE 'strcmp\([][a-z_+ 0-9]+, "--?[a-z][a-z0-9-]*"\)' \
        "$src"/tools/rdl/*.c | grep -oE '"--?[a-z][a-z0-9-]*"' |
        tr -d '"' | LC_ALL=C sort -u
    # cli_parse_named()'s FLAG (info's --json, release's --force).
    grep -ohE 'cli_parse_named\([^;]*' "$src"/tools/rdl/*.c |
        grep -oE '"--[a-z][a-z0-9-]*"' | tr -d '"' | LC_ALL=C sort -u
}

# value_for PLACEHOLDER: a value that the option takes, from the page's
# placeholder: the first of a list of words (lock|fair -> lock), else one
# for the placeholder's name.
value_for() {
    local first=${1%%|*}
    case $first in
    N) echo 2 ;;
    MS) echo 1000 ;;
    K) echo lock ;;
    URL) echo redis://127.0.0.1:6379 ;;
    P) echo test ;;
    FILE | F) echo /dev/null ;;
    NAME) echo localhost ;;
    *) echo "$first" ;;
    esac
}

# probe [COMMAND] -- OPTION [VALUE]: whether the tool takes OPTION (with
# VALUE) before --help: exit 0 and a usage on stdout. -h and --help
# themselves print the usage; --version prints "rdl VERSION".
probe() {
    local pre=() rc=0 want='^usage:'
    while [ "$1" != -- ]; do
        pre+=("$1")
        shift
    done
    shift
    case $1 in
    -h | --help) ;;
    --version) want='^rdl [0-9]' ;;
    *) set -- "$@" --help ;;
    esac
    "$rdl" ${pre[@]+"${pre[@]}"} "$@" >"$tmp/probe" 2>&1 || rc=$?
    [ $rc -eq 0 ] && grep -q "$want" "$tmp/probe"
}

# synopsis_probes COMMAND: "OPTION VALUE" or "OPTION" for each option of
# COMMAND's SYNOPSIS form: an option inside [...] with a word after it
# takes that word's value; any other is a flag (release's --force NAME).
synopsis_probes() {
    synopsis_of "$1" | sed -e 's/\[/\n[/g' -e 's/\]/]\n/g' | awk '
        /^\[--?[a-z]/ {
            gsub(/[][]/, "")
            print $1, ($2 == "" ? "" : $2)
            next
        }
        {
            for (i = 1; i <= NF; i++)
                if ($i ~ /^--?[a-z]/)
                    print $i
        }'
}

# section_probes SECTION: the same for the .TP tags of a section of the
# page: "OPTION VALUE" (\fB--url\fR \fIURL\fR) or "OPTION".
section_probes() {
    man_raw_section "$1" | awk '
        /^\.TP/ { tag = 1; next }
        tag {
            tag = 0
            sub(/^\.B /, "")
            if ($1 ~ /^--?[a-z]/ && $1 !~ /,$/)
                print $1, (NF > 1 ? $2 : "")
            else if ($1 ~ /^--?[a-z]/) # "-h, --help"
                for (i = 1; i <= NF; i++) {
                    o = $i
                    sub(/,$/, "", o)
                    print o
                }
        }'
}

# same WHAT LEFT_NAME LEFT RIGHT_NAME RIGHT: two sorted lists are equal, or
# fail naming what is only in one of them.
same() {
    local only_left only_right msg=""
    only_left=$(LC_ALL=C comm -23 <(printf '%s\n' "$3" | sed '/^$/d') \
        <(printf '%s\n' "$5" | sed '/^$/d') | tr '\n' ' ')
    only_right=$(LC_ALL=C comm -13 <(printf '%s\n' "$3" | sed '/^$/d') \
        <(printf '%s\n' "$5" | sed '/^$/d') | tr '\n' ' ')
    [ -z "$only_left" ] || msg="$msg in $2 but not $4: $only_left;"
    [ -z "$only_right" ] || msg="$msg in $4 but not $2: $only_right;"
    [ -z "$msg" ] || echo "$1:$msg"
}

# subset WHAT SMALL_NAME SMALL BIG_NAME BIG
subset() {
    local missing
    missing=$(LC_ALL=C comm -23 <(printf '%s\n' "$3" | sed '/^$/d') \
        <(printf '%s\n' "$5" | sed '/^$/d') | tr '\n' ' ')
    [ -z "$missing" ] || echo "$1: in $2 but not $4: $missing"
}

# ---- Cases ----------------------------------------------------------------

case_help() {
    local c h out rc cmd
    help_of >/dev/null
    for c in $(help_commands) ""; do
        for h in --help -h; do
            cmd=("$rdl" ${c:+"$c"} "$h")
            rc=0
            out=$("${cmd[@]}" 2>"$tmp/err") || rc=$?
            [ $rc -eq 0 ] || fail "rdl $c $h exited $rc: $(cat "$tmp/err")"
            grep -q '^usage: rdl' <<<"$out" ||
                fail "rdl $c $h printed no usage on stdout: $out"
        done
    done
    [ -n "$(help_commands)" ] || fail "rdl --help lists no commands"
}

case_commands() {
    local problems="" from_help from_source from_synopsis from_section
    from_help=$(help_commands)
    from_source=$(source_commands)
    from_synopsis=$(synopsis_forms |
        sed -nE 's/^rdl \[GLOBAL OPTIONS\] ([a-z]+).*/\1/p' | LC_ALL=C sort -u)
    from_section=$(man_plain | awk '
        /^\.SH / { on = ($0 == ".SH COMMANDS"); next }
        on && /^\.TP/ { tag = 1; next }
        on && tag { tag = 0; sub(/^\.B /, ""); print $1 }' | LC_ALL=C sort -u)
    [ -n "$from_source" ] || fail "no commands found in tools/rdl/main.c"
    problems+=$(same commands "rdl --help" "$from_help" main.c \
        "$from_source")$'\n'
    problems+=$(same commands "rdl --help" "$from_help" \
        "rdl.1 SYNOPSIS" "$from_synopsis")$'\n'
    problems+=$(same commands "rdl --help" "$from_help" \
        "rdl.1 COMMANDS" "$from_section")$'\n'
    problems=$(sed '/^$/d' <<<"$problems")
    [ -z "$problems" ] || fail $'\n'"$problems"
    echo "commands: $(tr '\n' ' ' <<<"$from_help")"
}

case_options() {
    local problems="" c opt value all_help="" man_opts section
    local synopsis_opts help_opts global_help global_man
    man_opts=$(man_plain | options)
    for c in $(help_commands); do
        synopsis_of "$c" >/dev/null ||
            fail "rdl.1 has no SYNOPSIS form for $c"
        synopsis_opts=$(synopsis_of "$c" | options)
        help_opts=$(help_options "$c")
        all_help+=$'\n'$help_opts
        problems+=$(same "$c options" "rdl $c --help" "$help_opts" \
            "rdl.1 SYNOPSIS" "$synopsis_opts")$'\n'
        # The tool takes every option of the form.
        while read -r opt value; do
            [ -n "$opt" ] || continue
            if [ -n "$value" ]; then
                probe "$c" -- "$opt" "$(value_for "$value")" ||
                    problems+="rdl $c does not take $opt $(value_for "$value") (rdl.1 SYNOPSIS): $(head -n 3 "$tmp/probe")"$'\n'
            else
                probe "$c" -- "$opt" ||
                    problems+="rdl $c does not take $opt (rdl.1 SYNOPSIS): $(head -n 3 "$tmp/probe")"$'\n'
            fi
        done < <(synopsis_probes "$c")
        # The probe can fail: an option the command does not take.
        ! probe "$c" -- --no-such-option ||
            fail "rdl $c --no-such-option --help exits 0: the probe proves nothing"
    done

    # Global and TLS options.
    global_help=$(help_options)
    all_help+=$'\n'$global_help
    global_man=$( (man_section "GLOBAL OPTIONS" && man_section "TLS OPTIONS") |
        options)
    problems+=$(same "global options" "rdl --help" "$global_help" \
        "rdl.1 GLOBAL OPTIONS and TLS OPTIONS" "$global_man")$'\n'
    for section in "GLOBAL OPTIONS" "TLS OPTIONS"; do
        while read -r opt value; do
            [ -n "$opt" ] || continue
            if [ -n "$value" ]; then
                probe -- "$opt" "$(value_for "$value")" ||
                    problems+="rdl does not take $opt $(value_for "$value") (rdl.1 $section): $(head -n 3 "$tmp/probe")"$'\n'
            else
                probe -- "$opt" ||
                    problems+="rdl does not take $opt (rdl.1 $section): $(head -n 3 "$tmp/probe")"$'\n'
            fi
        done < <(section_probes "$section")
    done
    ! probe -- --no-such-option ||
        fail "rdl --no-such-option --help exits 0: the probe proves nothing"

    # The per-command option sections describe the synopses' options.
    problems+=$(same "run options" "rdl.1 RUN OPTIONS" \
        "$(man_section "RUN OPTIONS" | grep -E '^--?[a-z]' | options)" \
        "rdl.1 SYNOPSIS (run)" "$(synopsis_of run | options)")$'\n'
    problems+=$(same "ls and top options" "rdl.1 LS AND TOP OPTIONS" \
        "$(man_section "LS AND TOP OPTIONS" | grep -E '^--?[a-z]' | options)" \
        "rdl.1 SYNOPSIS (ls, top)" \
        "$( (synopsis_of ls && synopsis_of top) | options)")$'\n'

    # What the source compares arguments with.
    [ "$(source_options | wc -l)" -gt 10 ] ||
        fail "found too few option strings in tools/rdl/*.c:" \
            "$(source_options | tr '\n' ' ')"
    all_help=$(printf '%s\n' "$all_help" | sed '/^$/d' | LC_ALL=C sort -u)
    problems+=$(subset "source options" "tools/rdl/*.c" \
        "$(source_options | LC_ALL=C sort -u)" rdl.1 "$man_opts")$'\n'
    problems+=$(subset "source options" "tools/rdl/*.c" \
        "$(source_options | LC_ALL=C sort -u)" "the --help texts" \
        "$all_help")$'\n'

    problems=$(sed '/^$/d' <<<"$problems")
    [ -z "$problems" ] || fail $'\n'"$problems"
    echo "options: $(tr '\n' ' ' <<<"$all_help")"
}

case_exit_codes() {
    local tool man_codes help_codes problems="" rc
    # cli.h: #define EXIT_NAME CODE
    tool=$( (echo 0 && sed -nE 's/^#define EXIT_[A-Z]+ ([0-9]+).*/\1/p' \
        "$src/tools/rdl/cli.h") | LC_ALL=C sort -u)
    [ "$(wc -l <<<"$tool")" -gt 1 ] || fail "no EXIT_ codes in cli.h"
    # EXIT STATUS: every number; "128 + the signal" counts as 128.
    man_codes=$(man_section "EXIT STATUS" | grep -oE '\b[0-9]+\b' |
        LC_ALL=C sort -u)
    problems+=$(subset "exit codes" "tools/rdl/cli.h" "$tool" \
        "rdl.1 EXIT STATUS" "$man_codes")$'\n'
    problems+=$(subset "exit codes" "rdl.1 EXIT STATUS" "$man_codes" \
        "tools/rdl/cli.h (and 128 + a signal)" \
        "$( (echo "$tool" && echo 128) | LC_ALL=C sort -u)")$'\n'
    # "exit 75", "exits 75" in the --help texts.
    help_codes=$( (help_of && for c in $(help_commands); do help_of "$c"; done) |
        grep -oiE '\bexits? [0-9]+' | grep -oE '[0-9]+' | LC_ALL=C sort -u)
    problems+=$(subset "exit codes" "the --help texts" "$help_codes" \
        "tools/rdl/cli.h" "$tool")$'\n'
    problems=$(sed '/^$/d' <<<"$problems")
    [ -z "$problems" ] || fail $'\n'"$problems"

    # Two of them without a server: bad usage, and nothing listening (port
    # 1 of the loopback).
    rc=0
    "$rdl" --no-such-option >/dev/null 2>&1 || rc=$?
    [ $rc -eq 64 ] || fail "rdl --no-such-option exited $rc, not 64"
    rc=0
    "$rdl" info >/dev/null 2>&1 || rc=$?
    [ $rc -eq 64 ] || fail "rdl info (no NAME) exited $rc, not 64"
    rc=0
    "$rdl" --url redis://127.0.0.1:1 --timeout 2000 info x >/dev/null \
        2>"$tmp/err" || rc=$?
    [ $rc -eq 69 ] ||
        fail "rdl info against a closed port exited $rc, not 69: $(cat "$tmp/err")"
    echo "exit codes: $(tr '\n' ' ' <<<"$tool")(and 128 + a signal)"
}

[ -x "$rdl" ] || fail "no tool at $rdl"
[ -f "$man" ] || fail "no man page at $man"
case $case_name in
help) case_help ;;
commands) case_commands ;;
options) case_options ;;
exit_codes) case_exit_codes ;;
*) fail "unknown case" ;;
esac
echo "PASS: $case_name"
