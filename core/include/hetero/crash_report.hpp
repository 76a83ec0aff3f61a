// Naming the plugin a crash came from. A provider that segfaults inside
// execute or compile takes the process with it (its code runs in the
// process), but the user should learn which plugin it was instead of a bare
// "Segmentation fault". The handler walks the crashed thread's stack for a
// frame inside a libhetero-ep-*.so, prints that file and the signal, and
// lets the signal end the process as it would have.
//
// Installing signal handlers is the program's choice: the hetero CLI does it
// at start-up; an app embedding libhetero may call it or keep its own.
#pragma once

namespace hetero {

// Handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT (one-shot: the
// default action is restored before the signal is raised again).
void report_plugin_crashes();

}  // namespace hetero
