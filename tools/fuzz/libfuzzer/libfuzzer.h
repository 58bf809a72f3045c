// libFuzzer's entry for programs that keep their own main (compiler-rt's FuzzerInterface.h).
// SwiftPM renames an executable's main and points the linker at it, so the fuzz binary
// cannot take libFuzzer's main; it calls this instead. Declared only: the symbol exists
// in a -sanitize=fuzzer build, and the normal build never references it.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
