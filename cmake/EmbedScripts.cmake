# Embeds the Lua scripts as C byte arrays with their SHA1, at build time.
# Run as: cmake -DOUT_DIR=<dir> -DSCRIPTS="a.lua;b.lua" -P EmbedScripts.cmake
# Writes <dir>/rdl_scripts.h (enum RDL__SCRIPT_<NAME>) and rdl_scripts.c
# (the table rdl__scripts[]). Files are only rewritten when their content
# changes, so unchanged scripts do not trigger rebuilds.
#
# A line "--@include NAME" in a script is replaced by scripts/lib/NAME.lua
# (one home for code several scripts share, e.g. the applied set). The
# expanded scripts, exactly as sent to Redis, are written to
# <dir>/scripts/ for the tests to read.
#
# A script with a line "--@batch" may also run inside the generated script
# "batch" (src/core/batch.c): its body becomes a local function of batch
# that reads its keys and arguments at offsets in batch's KEYS and ARGV, its libraries are included once at
# the top of batch, and batch runs a list of such calls in one EVALSHA,
# each under pcall, replying with one reply per call. Its rdl__scripts
# entry's `batch` is its index in batch's table (-1: not batched).

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
set(batch_dir "")

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
        "    {\"${name}\", \"${sha}\", body_${name}, ${size}, ${batch}},\n")
    math(EXPR index "${index} + 1")
    set(enum "${enum}" PARENT_SCOPE)
    set(arrays "${arrays}" PARENT_SCOPE)
    set(table "${table}" PARENT_SCOPE)
    set(index "${index}" PARENT_SCOPE)
endfunction()

file(MAKE_DIRECTORY "${OUT_DIR}/scripts")
foreach(path IN LISTS SCRIPTS)
    get_filename_component(name "${path}" NAME_WE)
    get_filename_component(dir "${path}" DIRECTORY)
    file(READ "${path}" text)
    set(batch -1)
    if(text MATCHES "\n--@batch\n")
        set(batch ${batch_count})
        math(EXPR batch_count "${batch_count} + 1")
        set(batch_dir "${dir}")
        string(REPLACE "\n--@batch\n" "\n" plain "${text}")
        string(REGEX MATCHALL "--@include [a-z_]+\n" includes "${plain}")
        foreach(line IN LISTS includes)
            string(REGEX REPLACE "--@include ([a-z_]+)\n" "\\1" lib "${line}")
            list(FIND batch_libs "${lib}" found)
            if(found EQUAL -1)
                list(APPEND batch_libs "${lib}")
            endif()
            string(REPLACE "${line}" "" plain "${plain}")
        endforeach()
        # KEYS[i] and ARGV[i] become KEYS[kb + i] and ARGV[ab + i]: the
        # call's own keys and arguments within batch's, with no copy.
        if(plain MATCHES "(KEYS|ARGV)[^[]")
            message(FATAL_ERROR "${path}: a batched script may use KEYS and "
                "ARGV only as KEYS[i] and ARGV[i]")
        endif()
        string(REPLACE "KEYS[" "KEYS[kb + " plain "${plain}")
        string(REPLACE "ARGV[" "ARGV[ab + " plain "${plain}")
        string(APPEND batch_fns
            "local function ${name}(kb, ab)\n${plain}end\n\n")
        string(APPEND batch_run "    ${name},\n")
        # The script on its own: its libraries at the top, as before.
        file(READ "${path}" text)
        string(REPLACE "\n--@batch\n" "\n" text "${text}")
    endif()
    string(REGEX MATCHALL "--@include [a-z_]+\n" includes "${text}")
    foreach(line IN LISTS includes)
        string(REGEX REPLACE "--@include ([a-z_]+)\n" "\\1" lib "${line}")
        if(NOT EXISTS "${dir}/lib/${lib}.lua")
            message(FATAL_ERROR "${path}: no scripts/lib/${lib}.lua")
        endif()
        file(READ "${dir}/lib/${lib}.lua" body)
        string(REPLACE "${line}" "${body}" text "${text}")
    endforeach()
    embed("${name}" "${text}" ${batch})
endforeach()

# The batch script: the batched scripts' libraries, their bodies as
# functions, and the loop that runs the calls.
#   ARGV[1]  the number of calls; then, per call: its script's index in
#            `run` (0-based), its number of keys, its number of arguments,
#            and the arguments; KEYS: every call's keys, in order.
#   Reply    one reply per call: what its script returned, or its error.
# A call's error (pcall) does not stop the calls after it: each call is a
# script of its own, as if sent alone one after the other. READONLY (a
# replica) fails the whole batch instead, as it would fail each call.
if(batch_count GREATER 0)
    set(text "-- batch: generated by cmake/EmbedScripts.cmake from the scripts marked\n-- --@batch; runs several of their calls in one EVALSHA.\n")
    foreach(lib IN LISTS batch_libs)
        file(READ "${batch_dir}/lib/${lib}.lua" body)
        string(APPEND text "${body}")
    endforeach()
    string(APPEND text "\n${batch_fns}local run = {\n${batch_run}}\n")
    string(APPEND text [=[
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
        out[i] = r
    else
        local e = type(r) == 'table' and r.err or tostring(r)
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
    embed("batch" "${text}" -1)
endif()

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

${arrays}
const rdl__script rdl__scripts[RDL__SCRIPT_COUNT] = {
${table}};
")

write_if_changed("${OUT_DIR}/rdl_scripts.h" "${header}")
write_if_changed("${OUT_DIR}/rdl_scripts.c" "${source}")
