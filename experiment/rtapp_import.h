// `wakesim import rtapp FILE.json`: an rt-app workload description (rt-app's doc/tutorial.txt:
// "tasks" with their events, "global") turned into a wakesim scenario with a program workload.
// What the program kind cannot express is refused with one InputError line naming the event.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace wakesim {

// Reads the rt-app file `path` and returns the scenario (keys in a readable order). `machine`
// names the scenario's machine (a machine name or file). Errors are InputError (file, pointer,
// what was expected), pointers into the rt-app file.
nlohmann::ordered_json import_rtapp(const std::string& path, const std::string& machine);

}  // namespace wakesim
