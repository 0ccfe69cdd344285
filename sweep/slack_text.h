#pragma once
// Text of an alert posted to Slack.
#include <string>

namespace sweep {

/// <, > and & escaped: Slack reads <...> as a mention or a link, so a commit
/// subject holding "<!channel>" would page everyone.
std::string slack_escape(const std::string& text);

}  // namespace sweep
