#include "sweep/slack_text.h"

#include <doctest/doctest.h>

TEST_CASE("a Slack message escapes what Slack would read as a mention, a link or an entity") {
  CHECK(sweep::slack_escape("Revert <!channel> & <http://x|click>") ==
        "Revert &lt;!channel&gt; &amp; &lt;http://x|click&gt;");
  CHECK(sweep::slack_escape("uplift dropped from +1.00% to -0.50%") == "uplift dropped from +1.00% to -0.50%");
}
