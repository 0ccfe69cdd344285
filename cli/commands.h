#pragma once
// Every subcommand's attach function; main.cpp lists them in one table.
#include "cli/context.h"

namespace cli {

void attach_db(CLI::App& sub, Context& ctx);

}  // namespace cli
