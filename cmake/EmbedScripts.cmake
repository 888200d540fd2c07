# Embeds the Lua scripts as C byte arrays with their SHA1, at build time.
# Run as: cmake -DOUT_DIR=<dir> -DSCRIPTS="a.lua;b.lua" -P EmbedScripts.cmake
# Writes <dir>/rdl_scripts.h (enum RDL__SCRIPT_<NAME>) and rdl_scripts.c
# (the table rdl__scripts[], and the function library of them all, named
# in <dir>/rdl_library.h). Files are only rewritten when their content
# changes, so unchanged scripts do not trigger rebuilds.
#
# A line "--@include NAME" in a script is replaced by scripts/lib/NAME.lua
# (one home for code several scripts share, e.g. the applied set). A
# library may include another the same way: what it includes comes before
# it, and every library comes once per script, at its first include (the
# line of a later one is dropped). A library's own include lines are
# dropped from its text. The expanded scripts, exactly as sent to Redis,
# are written to <dir>/scripts/ for the tests to read.
#
# A script with a line "--@no-writes" writes nothing: its function in the
# library (below) is registered with the flag no-writes.
#
# A script with a line "--@batch" may also run inside the generated script
# "batch" (src/core/batch.c), which runs a list of calls in one EVALSHA.
# Its body becomes a local function of batch, so its own locals are the
# call's; its KEYS[n] and ARGV[n] become KEYS[KEYS_at + n] and
# ARGV[ARGV_at + n], the call's keys and arguments at their offsets in
# batch's (no copy: copying them cost more than the batch saved,
# docs/design-notes.md); its libraries are included once, at the top of
# batch, and so are shared by every call of a batch. Its rdl__scripts
# entry's `batch` is its index in batch's table (-1: not batched).
#
# Hence the rules checked here, which fail the build, naming the line:
#  - A library (scripts/lib/, batched or not: marking a script --@batch
#    must not change what its libraries do) reads no KEYS or ARGV: in the
#    batch those are batch's, whose KEYS[1] is the first call's key. It
#    takes its keys and arguments as parameters.
#  - A library has nothing outside its functions (`local function NAME(`
#    at the file's level), so it keeps no state from one call to the next:
#    in the batch, file-level locals live once for all the calls. State
#    that the calls of a batch are meant to share (lib/clock.lua's time)
#    is allowed on the line after one that starts with --@shared.
#  - A batched script indexes KEYS and ARGV only as KEYS[n] and ARGV[n],
#    n a number: another index (KEYS[i], ARGV[n or 1]) could not be moved
#    to the call's offset exactly.
# The check reads the Lua line by line with its comments and strings
# blanked, and follows blocks by their keywords (function, if, do, repeat
# open one; end, until close one); long brackets ([[ ]]), which it cannot
# follow, are refused in libraries and batched scripts.

if(NOT OUT_DIR OR NOT SCRIPTS)
    message(FATAL_ERROR "EmbedScripts.cmake needs OUT_DIR and SCRIPTS")
endif()

set(enum "")
set(arrays "")
set(table "")
set(index 0)
# Writes content to path unless it already holds exactly that, so an
# unchanged file keeps its time stamp and triggers no rebuild.
function(write_if_changed path content)
    set(old "")
    if(EXISTS "${path}")
        file(READ "${path}" old)
    endif()
    if(NOT old STREQUAL "${content}")
        file(WRITE "${path}" "${content}")
    endif()
endfunction()

set(batch_libs "")
set(batch_fns "")
set(batch_run "")
set(batch_count 0)

# out: text as a CMake list of its lines, with ";", "[" and "]" spelled
# @SC@, @LB@ and @RB@ (CMake's lists split on ";" outside brackets only),
# each line followed by a space (so a "\\" cannot escape the separator).
function(lua_lines out text)
    string(REPLACE ";" "@SC@" text "${text}")
    string(REPLACE "[" "@LB@" text "${text}")
    string(REPLACE "]" "@RB@" text "${text}")
    string(REPLACE "\n" " ;" text "${text}")
    set(${out} "${text}" PARENT_SCOPE)
endfunction()

# out: a line of Lua with its strings and comment blanked (the code).
function(lua_code out line)
    string(REGEX REPLACE
        "'([^'\\\\]|\\\\.)*'|\"([^\"\\\\]|\\\\.)*\"|--.*"
        " " code "${line}")
    set(${out} "${code}" PARENT_SCOPE)
endfunction()

# out: the block depth after a line whose code has the words `words`:
# function, if, do and repeat open a block; end and until close one.
function(lua_depth out depth words)
    set(open ${words})
    list(FILTER open INCLUDE REGEX "^(function|if|do|repeat)$")
    set(close ${words})
    list(FILTER close INCLUDE REGEX "^(end|until)$")
    list(LENGTH open o)
    list(LENGTH close c)
    math(EXPR d "${depth} + ${o} - ${c}")
    set(${out} ${d} PARENT_SCOPE)
endfunction()

# Checks the Lua in `text` (of file `path`), for the rules above. lib: a
# library (no KEYS or ARGV; nothing outside functions but --@shared
# state); else a batched script's body after its KEYS[n] and ARGV[n] were
# moved (no KEYS or ARGV left but those).
function(lua_check path text lib)
    if(text MATCHES "\\[=*\\[")
        message(FATAL_ERROR "${path}: long brackets ([[ or [=[) are not "
            "supported in a library or a batched script (the batch check "
            "cannot follow them)")
    endif()
    lua_lines(lines "${text}")
    set(n 0)
    set(depth 0)
    set(shared 0)
    foreach(line IN LISTS lines)
        math(EXPR n "${n} + 1")
        # Comments and strings blanked: what is left is code.
        lua_code(code "${line}")
        if(NOT lib)
            string(REGEX REPLACE
                "(KEYS|ARGV)@LB@(KEYS|ARGV)_at [+] [0-9]+@RB@" " " code
                "${code}")
        endif()
        string(REGEX MATCHALL "[A-Za-z_][A-Za-z0-9_]*" words "${code}")
        foreach(name KEYS ARGV)
            list(FIND words ${name} found)
            if(NOT found EQUAL -1)
                if(lib)
                    message(FATAL_ERROR "${path}:${n}: a library may not "
                        "read ${name}: in the batch script it would read "
                        "the batch's ${name}, the first call's. Pass what "
                        "it needs as parameters.")
                endif()
                message(FATAL_ERROR "${path}:${n}: a batched script may "
                    "use ${name} only as ${name}[n], n a number: in the "
                    "batch script the index is moved to the call's offset")
            endif()
        endforeach()
        if(lib AND depth EQUAL 0 AND NOT code MATCHES "^[ ]*$"
           AND NOT code MATCHES "^local function [A-Za-z_][A-Za-z0-9_]*[(]"
           AND NOT shared)
            message(FATAL_ERROR "${path}:${n}: a statement outside a "
                "function: in the batch script the calls of a batch would "
                "share it (the library is included once for them all). "
                "Keep state inside functions, or, if the calls are meant "
                "to share it, put a line starting --@shared before it.")
        endif()
        set(shared 0)
        if(line MATCHES "^--@shared")
            set(shared 1)
        endif()
        lua_depth(depth ${depth} "${words}")
        if(depth LESS 0)
            message(FATAL_ERROR "${path}:${n}: more blocks end than begin "
                "(the batch check lost track of them)")
        endif()
    endforeach()
    if(NOT depth EQUAL 0)
        message(FATAL_ERROR "${path}: ${depth} blocks do not end (the "
            "batch check lost track of them)")
    endif()
endfunction()

# out: `text` without the local functions at its top level that nothing
# left in it calls: the functions of its libraries that the script does
# not use (a function defined is a closure made on every run of the
# script, docs/design-notes.md "Script cost"). A function goes with the
# comment lines right above it. Names are matched as whole words in the
# code (comments and strings blanked), so a name that only looks used is
# kept: the text only loses what cannot run. Text with long brackets is
# left whole (the block count cannot follow them).
function(lua_shake out text)
    if(text MATCHES "\\[=*\\[")
        set(${out} "${text}" PARENT_SCOPE)
        return()
    endif()
    lua_lines(lines "${text}")
    set(n 0)
    set(depth 0)
    set(nchunks 0)
    set(in_chunk 0)
    set(comment_from -1)
    set(main_words "")
    set(names "")
    foreach(line IN LISTS lines)
        lua_code(code "${line}")
        string(REGEX MATCHALL "[A-Za-z_][A-Za-z0-9_]*" words "${code}")
        if(depth EQUAL 0 AND NOT in_chunk AND
           code MATCHES "^local function ([A-Za-z_][A-Za-z0-9_]*)[(]")
            set(in_chunk 1)
            set(k ${nchunks})
            math(EXPR nchunks "${nchunks} + 1")
            set(chunk_name_${k} "${CMAKE_MATCH_1}")
            list(APPEND names "${CMAKE_MATCH_1}")
            if(comment_from GREATER -1)
                set(chunk_from_${k} ${comment_from})
            else()
                set(chunk_from_${k} ${n})
            endif()
            set(chunk_words_${k} "")
        endif()
        if(in_chunk)
            list(APPEND chunk_words_${k} ${words})
        else()
            list(APPEND main_words ${words})
        endif()
        lua_depth(depth ${depth} "${words}")
        if(in_chunk AND depth EQUAL 0)
            set(chunk_to_${k} ${n})
            set(in_chunk 0)
        endif()
        # The comment block right above the next line, if it is one.
        if(depth EQUAL 0 AND line MATCHES "^--" AND
           NOT line MATCHES "^--@")
            if(comment_from EQUAL -1)
                set(comment_from ${n})
            endif()
        else()
            set(comment_from -1)
        endif()
        math(EXPR n "${n} + 1")
    endforeach()
    if(NOT depth EQUAL 0 OR in_chunk OR nchunks EQUAL 0)
        set(${out} "${text}" PARENT_SCOPE)
        return()
    endif()
    # Reachable from the code outside the functions, then from theirs.
    list(REMOVE_DUPLICATES main_words)
    set(keep "")
    set(todo "")
    foreach(w IN LISTS main_words)
        list(FIND names "${w}" f)
        if(NOT f EQUAL -1)
            list(APPEND todo "${w}")
        endif()
    endforeach()
    while(todo)
        list(POP_FRONT todo w)
        list(FIND keep "${w}" f)
        if(NOT f EQUAL -1)
            continue()
        endif()
        list(APPEND keep "${w}")
        math(EXPR last "${nchunks} - 1")
        foreach(k RANGE ${last})
            if(chunk_name_${k} STREQUAL w)
                foreach(u IN LISTS chunk_words_${k})
                    list(FIND names "${u}" g)
                    list(FIND keep "${u}" h)
                    if(NOT g EQUAL -1 AND h EQUAL -1)
                        list(APPEND todo "${u}")
                    endif()
                endforeach()
            endif()
        endforeach()
    endwhile()
    # The lines of the functions not kept go.
    set(drop_from "")
    set(drop_to "")
    math(EXPR last "${nchunks} - 1")
    foreach(k RANGE ${last})
        list(FIND keep "${chunk_name_${k}}" f)
        if(f EQUAL -1)
            list(APPEND drop_from ${chunk_from_${k}})
            list(APPEND drop_to ${chunk_to_${k}})
        endif()
    endforeach()
    set(result "")
    set(n 0)
    set(d 0)
    list(LENGTH drop_from ndrop)
    foreach(line IN LISTS lines)
        set(dropped 0)
        if(d LESS ndrop)
            list(GET drop_from ${d} a)
            list(GET drop_to ${d} b)
            if(n GREATER_EQUAL a AND n LESS_EQUAL b)
                set(dropped 1)
            endif()
            if(n EQUAL b)
                math(EXPR d "${d} + 1")
            endif()
        endif()
        if(NOT dropped)
            string(APPEND result "${line}\n")
        endif()
        math(EXPR n "${n} + 1")
    endforeach()
    # Back from lua_lines' spelling: each line had a space appended.
    string(REGEX REPLACE " \n" "\n" result "${result}")
    string(REPLACE "@SC@" ";" result "${result}")
    string(REPLACE "@LB@" "[" result "${result}")
    string(REPLACE "@RB@" "]" result "${result}")
    # lua_lines made the text's end a line of its own (the space after the
    # last newline, or the last line without one).
    string(REGEX REPLACE "\n$" "" result "${result}")
    set(${out} "${result}" PARENT_SCOPE)
endfunction()

set(checked_libs "")

# out: the libraries that the library `lib` (a path) needs, in the order
# they must come: the ones it includes (its own --@include lines), each
# after those it needs in turn, then lib itself; none twice. from: the
# file that includes it, for messages; ARGN: the libraries on the way down
# to it (an include cycle fails the build).
function(lib_needs out lib from)
    if(NOT EXISTS "${lib}")
        message(FATAL_ERROR "${from}: no ${lib}")
    endif()
    list(FIND ARGN "${lib}" found)
    if(NOT found EQUAL -1)
        message(FATAL_ERROR "${from}: includes ${lib}, which needs "
            "${from} (an include cycle)")
    endif()
    get_filename_component(dir "${lib}" DIRECTORY)
    file(READ "${lib}" body)
    string(REGEX MATCHALL "--@include [a-z_]+\n" includes "${body}")
    set(needs "")
    foreach(line IN LISTS includes)
        string(REGEX REPLACE "--@include ([a-z_]+)\n" "\\1" dep "${line}")
        lib_needs(sub "${dir}/${dep}.lua" "${lib}" ${ARGN} "${lib}")
        foreach(l IN LISTS sub)
            list(FIND needs "${l}" found)
            if(found EQUAL -1)
                list(APPEND needs "${l}")
            endif()
        endforeach()
    endforeach()
    list(APPEND needs "${lib}")
    set(${out} "${needs}" PARENT_SCOPE)
endfunction()

# out: the text of the library `lib` (a path) without its include lines
# (lib_needs brings what they name).
function(lib_body out lib)
    file(READ "${lib}" body)
    string(REGEX REPLACE "--@include [a-z_]+\n" "" body "${body}")
    set(${out} "${body}" PARENT_SCOPE)
endfunction()

# Expands `text` (a script, or the generated batch) into the table.
# `batch` is the script's index in batch's table, or -1.
function(embed name text batch)
    string(TOUPPER "${name}" upper)
    set(expanded "${OUT_DIR}/scripts/${name}.lua")
    write_if_changed("${expanded}" "${text}")
    file(READ "${expanded}" hex HEX)
    file(SHA1 "${expanded}" sha)
    file(SIZE "${expanded}" size)
    # Two hex digits per byte become "0xNN," with a line break every 16.
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
    string(REGEX REPLACE "((0x..,){16})" "\\1\n    " bytes "${bytes}")
    string(APPEND enum "    RDL__SCRIPT_${upper} = ${index},\n")
    string(APPEND arrays
        "static const char body_${name}[] = {\n    ${bytes}0x00};\n")
    string(APPEND table
        "    {\"${name}\", \"${sha}\", \"rdl_@LIBH@_${name}\", body_${name}, ${size}, ${batch}},\n")
    math(EXPR index "${index} + 1")
    set(enum "${enum}" PARENT_SCOPE)
    set(arrays "${arrays}" PARENT_SCOPE)
    set(table "${table}" PARENT_SCOPE)
    set(index "${index}" PARENT_SCOPE)
endfunction()

# The function library (Redis 7.0 and later: FUNCTION LOAD once, then
# FCALL; src/core/script.c): every library once at its top, so their
# functions are made when the library loads instead of on every call, and
# each script's body as the function rdl_<hash>_<script>, whose KEYS and
# ARGV are its parameters. State a library shares between the calls of a
# batch (--@shared) would live from one call to the next here: each
# function resets it first. <hash> is that of the library's text, so
# clients of different versions load libraries of different names.
set(fn_libs "")
set(fn_text "")
function(fn_register name body)
    set(flags "")
    # A script that writes nothing says so: its function may then run
    # where writes are refused (a replica, a server at maxmemory), as the
    # script would, and the server refuses any write it tries.
    if(body MATCHES "\n--@no-writes\n")
        set(flags ", flags = {'no-writes'}")
    endif()
    string(APPEND fn_text "\nredis.register_function{function_name = 'rdl_@LIBH@_${name}', callback = function(KEYS, ARGV)\n@RESET@${body}\nend${flags}}\n")
    set(fn_text "${fn_text}" PARENT_SCOPE)
endfunction()

file(MAKE_DIRECTORY "${OUT_DIR}/scripts")
foreach(path IN LISTS SCRIPTS)
    get_filename_component(name "${path}" NAME_WE)
    get_filename_component(dir "${path}" DIRECTORY)
    file(READ "${path}" text)
    string(REGEX MATCHALL "--@include [a-z_]+\n" includes "${text}")
    # libs: every library the script needs, in order; brings_<i>: the text
    # the i-th include line brings (the libraries it needs that no line
    # before brought).
    set(libs "")
    set(i 0)
    foreach(line IN LISTS includes)
        string(REGEX REPLACE "--@include ([a-z_]+)\n" "\\1" lib "${line}")
        lib_needs(needs "${dir}/lib/${lib}.lua" "${path}")
        set(brings_${i} "")
        foreach(lib IN LISTS needs)
            list(FIND libs "${lib}" found)
            if(NOT found EQUAL -1)
                continue()
            endif()
            list(APPEND libs "${lib}")
            lib_body(body "${lib}")
            string(APPEND brings_${i} "${body}")
            list(FIND checked_libs "${lib}" found)
            if(found EQUAL -1)
                file(READ "${lib}" body)
                lua_check("${lib}" "${body}" 1)
                list(APPEND checked_libs "${lib}")
            endif()
        endforeach()
        math(EXPR i "${i} + 1")
    endforeach()
    set(batch -1)
    if(text MATCHES "\n--@batch\n")
        set(batch ${batch_count})
        math(EXPR batch_count "${batch_count} + 1")
        # Its body in the batch, line for line as in its file (the check
        # names lines): the marker and the includes leave blank lines.
        string(REPLACE "\n--@batch\n" "\n\n" plain "${text}")
        string(REPLACE "\n--@batch\n" "\n" text "${text}")
        foreach(line IN LISTS includes)
            string(REPLACE "${line}" "\n" plain "${plain}")
        endforeach()
        foreach(lib IN LISTS libs)
            list(FIND batch_libs "${lib}" found)
            if(found EQUAL -1)
                list(APPEND batch_libs "${lib}")
            endif()
        endforeach()
        if(plain MATCHES "(KEYS|ARGV)_at")
            message(FATAL_ERROR "${path}: KEYS_at and ARGV_at are the "
                "batch script's names for a call's offsets")
        endif()
        # The call's own keys and arguments within batch's, with no copy.
        string(REGEX REPLACE "(^|[^A-Za-z0-9_.])(KEYS|ARGV)\\[([0-9]+)\\]"
            "\\1\\2[\\2_at + \\3]" plain "${plain}")
        lua_check("${path}" "${plain}" 0)
        string(APPEND batch_fns
            "local function ${name}(KEYS_at, ARGV_at)\n${plain}end\n\n")
        string(APPEND batch_run "    ${name},\n")
    endif()
    # Its function in the library: its body without its includes.
    foreach(lib IN LISTS libs)
        list(FIND fn_libs "${lib}" found)
        if(found EQUAL -1)
            list(APPEND fn_libs "${lib}")
        endif()
    endforeach()
    set(fbody "${text}")
    foreach(line IN LISTS includes)
        string(REPLACE "${line}" "\n" fbody "${fbody}")
    endforeach()
    fn_register("${name}" "${fbody}")
    # The script on its own: its libraries at the top.
    set(i 0)
    foreach(line IN LISTS includes)
        string(REPLACE "${line}" "${brings_${i}}" text "${text}")
        math(EXPR i "${i} + 1")
    endforeach()
    lua_shake(text "${text}")
    embed("${name}" "${text}" ${batch})
endforeach()

# The batch script: the batched scripts' libraries, their bodies as
# functions, and the loop that runs the calls.
#   ARGV[1]  the number of calls; then, per call: its script's index in
#            `run` (0-based), its number of keys, its number of arguments,
#            and the arguments; KEYS: every call's keys, in order.
#   Reply    one reply per call: what its script returned (nil sent as
#            false: the same nil reply in RESP2), or its error.
# A call's error (pcall) does not stop the calls after it: each call is a
# script of its own, as if sent alone one after the other. READONLY (a
# replica) fails the whole batch instead, as it would fail each call.
if(batch_count GREATER 0)
    set(text "-- batch: generated by cmake/EmbedScripts.cmake from the scripts marked\n-- --@batch; runs several of their calls in one EVALSHA.\n")
    foreach(lib IN LISTS batch_libs)
        lib_body(body "${lib}")
        string(APPEND text "${body}")
    endforeach()
    set(batch_body "\n${batch_fns}local run = {\n${batch_run}}\n")
    string(APPEND batch_body [=[
local out = {}
local k, a = 0, 1
for i = 1, tonumber(ARGV[1]) do
    local f = run[tonumber(ARGV[a + 1]) + 1]
    local nk, na = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
    a = a + 3
    local ok, r = pcall(f, k, a)
    k = k + nk
    a = a + na
    if ok then
        -- A nil would end the reply there (a Lua array ends at its first
        -- nil): every later call would lose its reply, grants included.
        -- false goes out as the nil reply a lone script's nil gives.
        if r == nil then
            r = false
        end
        out[i] = r
    else
        local e = type(r) == 'table' and r.err or tostring(r)
        -- Before Redis 7.0 a command's error raised in a script reads
        -- "@user_script: 1: -READONLY ...": its own reply follows the '-'.
        e = string.gsub(e, '^@user_script: %d+: %-', '')
        if not string.find(e, '^[A-Z]+ ') then
            e = 'ERR ' .. e
        end
        -- A replica refuses every write: the whole batch fails, as one
        -- call would, so that the client waits for a master and sends it
        -- again (the calls before this one wrote nothing).
        if string.sub(e, 1, 9) == 'READONLY ' then
            return redis.error_reply(e)
        end
        out[i] = {err = e}
    end
end
return out
]=])
    string(APPEND text "${batch_body}")
    fn_register("batch" "${batch_body}")
    lua_shake(text "${text}")
    embed("batch" "${text}" -1)
endif()

# The library's text: its libraries, the reset of their --@shared state,
# the functions; then its name, from its hash.
set(lib_text "")
set(reset "")
foreach(lib IN LISTS fn_libs)
    lib_body(body "${lib}")
    string(APPEND lib_text "${body}")
    string(REGEX MATCHALL "\n--@shared[^\n]*\nlocal [^\n=]+" shared "\n${body}")
    foreach(decl IN LISTS shared)
        string(REGEX REPLACE ".*\nlocal " "" names "${decl}")
        string(STRIP "${names}" names)
        string(REGEX REPLACE "[^,]+" "nil" nils "${names}")
        string(APPEND reset "${names} = ${nils}\n")
    endforeach()
endforeach()
string(REPLACE "@RESET@" "${reset}" fn_text "${fn_text}")
# Whole-line comments stay in the scripts' files: the library is sent
# whole whenever a server lacks it.
string(REGEX REPLACE "\n[ ]*--[^\n]*" "" lib_text "\n${lib_text}")
string(REGEX REPLACE "\n[ ]*--[^\n]*" "" fn_text "${fn_text}")
set(lib_text "#!lua name=rdl_@LIBH@${lib_text}${fn_text}")
string(SHA1 libh "${lib_text}")
string(SUBSTRING "${libh}" 0 12 libh)
string(REPLACE "@LIBH@" "${libh}" lib_text "${lib_text}")
string(REPLACE "@LIBH@" "${libh}" table "${table}")
set(lib_path "${OUT_DIR}/scripts/library.lua")
write_if_changed("${lib_path}" "${lib_text}")
file(READ "${lib_path}" hex HEX)
file(SIZE "${lib_path}" lib_size)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n    " bytes "${bytes}")
string(APPEND arrays "static const char body_library[] = {\n    ${bytes}0x00};\n")

set(header "/* Generated by cmake/EmbedScripts.cmake; do not edit. */
#ifndef RDL_SCRIPTS_H
#define RDL_SCRIPTS_H

enum {
${enum}    RDL__SCRIPT_COUNT = ${index}
};

extern const rdl__script rdl__scripts[RDL__SCRIPT_COUNT];

#endif
")
set(source "/* Generated by cmake/EmbedScripts.cmake; do not edit. */
#include \"internal.h\"
#include \"rdl_library.h\"

${arrays}
const rdl__script rdl__scripts[RDL__SCRIPT_COUNT] = {
${table}};

const char rdl__library_name[] = \"rdl_${libh}\";
const char *const rdl__library_body = body_library;
const size_t rdl__library_len = ${lib_size};
")
# The library's name and text alone, for the connection's handshake
# (src/core/connect.c), which sits below the scripts' layer.
set(lib_header "/* Generated by cmake/EmbedScripts.cmake; do not edit. */
#ifndef RDL_LIBRARY_H
#define RDL_LIBRARY_H

#include <stddef.h>

/* The function library of every script: its name (FUNCTION LIST
 * LIBRARYNAME) and its text (FUNCTION LOAD). */
extern const char rdl__library_name[];
extern const char *const rdl__library_body;
extern const size_t rdl__library_len;

#endif
")

write_if_changed("${OUT_DIR}/rdl_scripts.h" "${header}")
write_if_changed("${OUT_DIR}/rdl_library.h" "${lib_header}")
write_if_changed("${OUT_DIR}/rdl_scripts.c" "${source}")
