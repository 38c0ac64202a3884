# The version and git revision compiled into gpulab. The revision is read at build time (not only
# at configure time), and the generated file is rewritten only when it changes, so an unchanged
# tree does not rebuild.
set(_gpulab_version_script ${CMAKE_CURRENT_LIST_DIR}/write_version.cmake)

function(gpulab_generate_version out)
  add_custom_target(gpulab.version
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUT=${out}
            -DVERSION=${PROJECT_VERSION} -P ${_gpulab_version_script}
    BYPRODUCTS ${out}
    COMMENT "Reading the git revision"
    VERBATIM)
endfunction()
