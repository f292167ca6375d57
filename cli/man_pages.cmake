# man_pages.cmake - run at build time (cmake -P): asks the built perfkit for
# its man pages, perfkit.1 and perfkit-CMD.1 for every command of
# commands.def, so that they come from the option tables --help prints.
# -DPERFKIT=the binary -DCOMMANDS=run;report;... -DOUT=the folder
file(MAKE_DIRECTORY ${OUT})
set(ENV{ASAN_OPTIONS} "detect_leaks=0")
foreach(page IN ITEMS "" ${COMMANDS})
  if(page STREQUAL "")
    set(file ${OUT}/perfkit.1)
  else()
    set(file ${OUT}/perfkit-${page}.1)
  endif()
  execute_process(COMMAND ${PERFKIT} help --man ${page}
                  OUTPUT_FILE ${file}.tmp RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    file(REMOVE ${file}.tmp)
    message(FATAL_ERROR "perfkit help --man ${page} failed (${status})")
  endif()
  file(RENAME ${file}.tmp ${file})
endforeach()
