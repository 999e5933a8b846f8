#!/usr/bin/env bash
# Checks that no binary or shared library under the given folders needs the CUDA driver to load
# (docs/design.md, decision 4: libcuda.so.1 is opened with dlopen at run time, so tessel starts on a
# machine without a GPU driver). Every ELF executable and shared object is checked, directly
# (its DT_NEEDED entries, read with readelf) and through its dependencies (ldd). Folders that hold
# other projects' binaries (the Python virtual environment, CMake's own probes) are skipped.
#   check_no_driver_dependency.sh <folder>...
# Fails naming every offender; also fails when it finds nothing to check (a wrong folder would
# otherwise pass).
set -euo pipefail
checked=0
offenders=()
while IFS= read -r -d '' file; do
    # Executables and shared objects only (not object files or archives).
    type="$(readelf -h "$file" 2>/dev/null | awk '/^ *Type:/ {print $2}')" || continue
    [ "$type" = EXEC ] || [ "$type" = DYN ] || continue
    checked=$((checked + 1))
    if readelf -d "$file" | grep -E 'NEEDED.*\[libcuda\.so' >/dev/null; then
        offenders+=("$file (DT_NEEDED: $(readelf -d "$file" | grep -oE 'libcuda\.so[^]]*' | head -1))")
    elif ldd "$file" 2>/dev/null | grep -E '^\s*libcuda\.so' >/dev/null; then
        offenders+=("$file (through a dependency: $(ldd "$file" | grep -E '^\s*libcuda\.so' | xargs))")
    fi
done < <(find "$@" \( -name venv -o -name CMakeFiles -o -name _deps \) -prune -o \
              -type f \( -perm -u+x -o -name '*.so' -o -name '*.so.*' \) -print0)
if [ "$checked" -eq 0 ]; then
    echo "check_no_driver_dependency: no executable or shared library found under $*" >&2
    exit 1
fi
if [ ${#offenders[@]} -gt 0 ]; then
    echo "these need the CUDA driver (libcuda.so.1) to load; tessel must open it at run time" >&2
    echo "(docs/design.md, decision 4; cmake/TesselNVRTC.cmake):" >&2
    printf '  %s\n' "${offenders[@]}" >&2
    exit 1
fi
echo "check_no_driver_dependency: $checked executables and shared libraries, none needs libcuda"
