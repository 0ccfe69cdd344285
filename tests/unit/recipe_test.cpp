#include <doctest/doctest.h>

#include "builder/build.h"
#include "builder/recipe.h"

using namespace builder;

namespace {
const char* kRecipe = R"(
name = "demo"
timeout = "90s"
[configure]
command = "cmake -S {source} -B {build} -DCMAKE_CXX_COMPILER_LAUNCHER={launcher}"
skip_if_exists = "build.ninja"
[build]
command = "ninja -C {build} -j {jobs}"
[env]
CCACHE_DIR = "{data}/ccache"
[artifacts]
compiler = "bin/cc"
abs = "/opt/x"
)";
}

TEST_CASE("a recipe parses and renders the exact commands") {
  auto r = parse_recipe(kRecipe, "demo.toml");
  REQUIRE(r.ok());
  CHECK(r->timeout.count() == 90);
  CHECK(r->launcher == "ccache");
  auto out = render(*r, {"/w/src", "/w/build", "/data", 4});
  REQUIRE(out.ok());
  CHECK(out->configure == "cmake -S /w/src -B /w/build -DCMAKE_CXX_COMPILER_LAUNCHER=ccache");
  CHECK(out->build == "ninja -C /w/build -j 4");
  CHECK(out->env.at("CCACHE_DIR") == "/data/ccache");
  CHECK(out->artifacts.at("compiler") == "/w/build/bin/cc");
  CHECK(out->artifacts.at("abs") == "/opt/x");
  CHECK(out->configure_marker == "/w/build/build.ninja");
}

TEST_CASE("skip_if_exists is filled like an artifact, and a placeholder nobody fills is refused at load") {
  std::string text = kRecipe;
  text.replace(text.find("skip_if_exists = \"build.ninja\""), 30, "skip_if_exists = \"{build}/build.ninja\"");
  auto r = parse_recipe(text, "demo.toml");
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(render(*r, {"/w/src", "/w/build", "/data", 4})->configure_marker == "/w/build/build.ninja");
  text.replace(text.find("{build}/build.ninja"), 7, "{biuld}");
  auto typo = parse_recipe(text, "demo.toml");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message.find("skip_if_exists") != std::string::npos);
  CHECK(typo.error().message.find("{biuld}") != std::string::npos);
}

TEST_CASE("the recipe hash follows meaning, not formatting") {
  auto a = parse_recipe(kRecipe, "a.toml").take();
  auto b = parse_recipe(std::string("# a comment\n") + kRecipe, "b.toml").take();
  CHECK(a.content_hash == b.content_hash);
  std::string changed = kRecipe;
  changed.replace(changed.find("-j {jobs}"), 9, "-j {jobs} -v");
  CHECK(parse_recipe(changed, "c.toml")->content_hash != a.content_hash);
  CHECK(parse_recipe(changed, "c.toml")->build_hash != a.build_hash);
}

TEST_CASE("a changed [compile] section changes what the recipe measures, not what it builds") {
  const std::string base = "name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\ncompiler = '{build}/cc'\n";
  auto a = parse_recipe(base + "[compile]\ncommand = '{compiler} {input} -o {output} -Oz'\n", "a.toml").take();
  auto flags = parse_recipe(base + "[compile]\ncommand = '{compiler} {input} -o {output} -O2'\n", "b.toml").take();
  auto prefix = parse_recipe(base + "[compile]\ncommand = '{compiler} {input} -o {output} -Oz'\n"
                                    "ml_flag_prefix = '-mllvm'\n", "c.toml").take();
  auto cc1 = parse_recipe(base + "[compile]\ncommand = '{compiler} {input} -o {output} -Oz'\ncc1 = '{compiler}'\n",
                          "d.toml").take();
  // Word boundaries count: "-O z" is not "-Oz".
  auto split = parse_recipe(base + "[compile]\ncommand = '{compiler} {input} -o {output} -O z'\n", "e.toml").take();
  for (const auto* other : {&flags, &prefix, &cc1, &split}) {
    CHECK(other->build_hash == a.build_hash);
    CHECK(other->content_hash != a.content_hash);
  }
}

TEST_CASE("a [compile] timeout is read as a duration and is part of what the recipe measures when set") {
  const std::string base =
      "name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\ncompiler = '{build}/cc'\n"
      "[compile]\ncommand = '{compiler} {input} -o {output} -Oz'\n";
  auto a = parse_recipe(base, "a.toml").take();
  CHECK(a.compile_timeout == Recipe::kDefaultCompileTimeout);
  auto longer = parse_recipe(base + "timeout = '10m'\n", "b.toml").take();
  CHECK(longer.compile_timeout.count() == 600);
  CHECK(longer.content_hash != a.content_hash);
  CHECK(longer.build_hash == a.build_hash);
  // The default written out is the recipe it was: its series go on.
  CHECK(parse_recipe(base + "timeout = '2m'\n", "c.toml")->content_hash == a.content_hash);
  auto bad = parse_recipe(base + "timeout = 'soon'\n", "d.toml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "d.toml: compile.timeout must be a duration like \"5m\", not \"soon\"");
  CHECK_FALSE(parse_recipe(base + "timeout = 30\n", "e.toml").ok());
  // Without its unit, "10" could be seconds or minutes: refused, not read as 10 s.
  CHECK(parse_recipe(base + "timeout = '10'\n", "f.toml").error().message ==
        "f.toml: compile.timeout must be a duration like \"5m\", not \"10\"");
}

TEST_CASE("artifacts the cache could not keep apart, or named like the compiled module, are refused") {
  auto same = parse_recipe("name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\ncompiler = '{build}/bin/cc'\n"
                           "tool = '{source}/tools/cc'\n", "r.toml");
  REQUIRE_FALSE(same.ok());
  CHECK(same.error().message ==
        "r.toml: artifacts compiler and tool have the same file name 'cc' (the cache keeps each under its file name)");
  auto input = parse_recipe("name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\ninput = '{build}/bin/cc'\n", "r.toml");
  REQUIRE_FALSE(input.ok());
  CHECK(input.error().message == "r.toml: artifact name 'input' is taken: {input} is the module being compiled");
  // A directory is no file to cache: every check-in's build would lack it.
  for (const char* dir : {"", "{build}", "{build}/bin/", "{source}", "{data}"}) {
    auto r = parse_recipe(std::string("name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\ncompiler = '") + dir + "'\n",
                          "r.toml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message ==
          std::string("r.toml: artifacts.compiler must name a file (e.g. \"{build}/bin/cc\"), not '") + dir + "'");
  }
}

TEST_CASE("a placeholder written inside a shell command's quotes is refused: it is quoted as one word already") {
  auto err = [](const std::string& build) {
    auto r = parse_recipe("name = 'x'\n[build]\ncommand = \"" + build + "\"\n[artifacts]\na = 'bin/a'\n", "r.toml");
    return r.ok() ? std::string("accepted") : r.error().message;
  };
  auto refused = [](const char* p) {
    return std::string("r.toml: build.command quotes ") + p +
           ": write it bare, it becomes one shell word quoted as needed (for sh -c '…', pass it as an argument: sh -c "
           "'… \"$1\" …' sh " +
           p + ")";
  };
  CHECK(err("ninja -C '{build}'") == refused("{build}"));
  CHECK(err("cd \\\"{source}/sub\\\" && make") == refused("{source}"));
  CHECK(err("cmake \\\"-B{build}\\\"") == refused("{build}"));
  // Inside sh -c '…' the filled path's own quotes would end the string.
  CHECK(err("sh -c 'sleep 3; touch {build}/late' & wait") == refused("{build}"));
  // Bare, escaped or beside a quoted word, and the shell's own braces in quotes, are fine.
  CHECK(err("ninja -C {build} 'all' && echo \\\"${HOME}\\\" \\\\'{jobs}") == "accepted");
  CHECK(err("awk '{{print $1}' log && make -C {build}") == "accepted");
  // A command substitution quotes afresh, {jobs} is a number, a comment is not run, and a quote that closed is closed.
  CHECK(err("cd \\\"$(dirname {build})\\\" && make '-j{jobs}' && echo x # don't") == "accepted");
  CHECK(err("sh -c 'sleep 3; touch \\\"$1\\\"/late' sh {build} && echo 'x'{build} `ls {data}`") == "accepted");
  CHECK(err("echo '${HOME} {{x}' && make -C {build}") == "accepted");  // neither is a placeholder
  auto configure = parse_recipe(
      "name = 'x'\n[configure]\ncommand = \"cmake -S '{source}'\"\n[build]\ncommand = 'make'\n[artifacts]\na = 'b'\n",
      "r.toml");
  REQUIRE_FALSE(configure.ok());
  CHECK(configure.error().message.find("configure.command quotes {source}") != std::string::npos);
}

TEST_CASE("recipe errors name the key and the file") {
  auto unknown = parse_recipe("name = 'x'\ncolour = 'red'\n[build]\ncommand = 'make'\n[artifacts]\na = 'b'\n", "r.toml");
  CHECK(
      unknown.error().message ==
      "r.toml: unknown key 'colour' (the top level takes artifacts, build, ccache_remote_storage, compile, configure, "
      "description, env, jobs, launcher, name, timeout)");
  auto nested = parse_recipe("name = 'x'\n[build]\ncommand = 'make'\nflags = 1\n[artifacts]\na = 'b'\n", "r.toml");
  CHECK(nested.error().message == "r.toml: unknown key 'build.flags' ([build] takes command)");
  auto no_build = parse_recipe("name = 'x'\n[artifacts]\na = 'b'\n", "r.toml");
  CHECK(no_build.error().message == "r.toml: missing table [build]");
  auto no_artifacts = parse_recipe("name = 'x'\n[build]\ncommand = 'make'\n", "r.toml");
  CHECK(no_artifacts.error().message.find("missing table [artifacts]") != std::string::npos);
  auto bad_timeout = parse_recipe("name = 'x'\ntimeout = 'soon'\n[build]\ncommand = 'make'\n[artifacts]\na = 'b'\n", "r.toml");
  CHECK(bad_timeout.error().message.find("timeout must be a duration") != std::string::npos);
  auto no_name = parse_recipe("[build]\ncommand = 'make'\n", "r.toml");
  CHECK(no_name.error().message == "r.toml: missing key 'name'");
  // The name names the compile cache's directory: "llvm/opt" would hide its
  // builds from `cache prune`, "../x" write outside the data directory.
  for (const char* name : {"llvm/opt", "..", "../x"}) {
    auto bad = parse_recipe(std::string("name = '") + name + "'\n[build]\ncommand = 'make'\n[artifacts]\na = 'b'\n", "r.toml");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message == std::string("r.toml: name '") + name +
                                     "' must not be '.' or '..', nor hold a '/' (it names the cache's directories)");
  }
}

TEST_CASE("a compile line splits on any whitespace, and quotes no shell would remove are refused") {
  auto base = std::string("name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\ncc = 'bin/cc'\n[compile]\n");
  auto multi = parse_recipe(base + "command = \"\"\"{cc} -c\t-Oz\n  {input} -o {output}\"\"\"\n", "r.toml").take();
  CHECK(multi.compile == std::vector<std::string>{"{cc}", "-c", "-Oz", "{input}", "-o", "{output}"});
  auto quoted = parse_recipe(base + "command = \"{cc} -c '-DX=a b' {input} -o {output}\"\n", "r.toml");
  REQUIRE_FALSE(quoted.ok());
  CHECK(quoted.error().message ==
        "r.toml: compile.command is split on whitespace, not by a shell: quotes and backslashes are not supported");
  // A compile that writes elsewhere would make every check-in a broken compiler.
  auto to_stdout = parse_recipe(base + "command = \"{cc} -c -Oz {input} -o -\"\n", "r.toml");
  REQUIRE_FALSE(to_stdout.ok());
  CHECK(to_stdout.error().message.rfind("r.toml: compile.command never names {output} (", 0) == 0);
  auto no_input = parse_recipe(base + "command = \"{cc} -c -Oz -o {output}\"\n", "r.toml");
  REQUIRE_FALSE(no_input.ok());
  CHECK(no_input.error().message.rfind("r.toml: compile.command never names {input} (", 0) == 0);
}

TEST_CASE("a recipe key of the wrong type is refused, never dropped") {
  auto with = [](const std::string& top, const std::string& build = "command = 'make'") {
    return parse_recipe("name = 'x'\n" + top + "\n[build]\n" + build + "\n[artifacts]\na = 'b'\n", "r.toml");
  };
  // A section written as a string would build without the user's configure step.
  CHECK(with("configure = 'cmake -DNEW=ON .'").error().message ==
        "r.toml: 'configure' must be a table ([configure] with its keys below it)");
  CHECK(with("env = 'CC=clang'").error().message == "r.toml: 'env' must be a table ([env] with its keys below it)");
  CHECK(with("jobs = '8'").error().message == "r.toml: 'jobs' must be a whole number");
  CHECK(with("launcher = false").error().message == "r.toml: 'launcher' must be a string");
  CHECK(with("", "command = ['make', 'all']").error().message == "r.toml: 'build.command' must be a string");
  CHECK(with("jobs = 8\nlauncher = ''").ok());
  CHECK(with("jobs = -4").error().message == "r.toml: 'jobs' must be 0 (one per core) to 1024, not -4");
}

TEST_CASE("a top-level key written below [env] or [artifacts] is refused, not taken for a variable or an artifact") {
  auto env = parse_recipe(
      "name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\na = 'b'\n[env]\nCC = 'clang'\n"
      "timeout = '8h'\n",
      "r.toml");
  REQUIRE_FALSE(env.ok());
  CHECK(
      env.error().message ==
      "r.toml: env.timeout is a top-level key of the recipe under [env]: write top-level keys above the first [table]");
  auto artifacts = parse_recipe("name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\na = 'b'\njobs = '4'\n", "r.toml");
  REQUIRE_FALSE(artifacts.ok());
  CHECK(artifacts.error().message.find("artifacts.jobs is a top-level key") != std::string::npos);
}

TEST_CASE("an unknown placeholder is refused with the recipe, naming it, before anything is built") {
  // Found at a build instead, a typo was each check-in's build failure, and cached.
  auto out = parse_recipe("name = 'x'\n[build]\ncommand = 'make -j{job}'\n[artifacts]\na = 'b'\n", "r.toml");
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().message == "r.toml: recipe x build.command: unknown placeholder {job}");
  auto compile = parse_recipe("name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\ncc = 'bin/cc'\n"
                              "[compile]\ncommand = '{compiler} -c {input} -o {output}'\n",
                              "r.toml");
  REQUIRE_FALSE(compile.ok());
  CHECK(compile.error().message == "r.toml: recipe x compile.command: unknown placeholder {compiler}");
  auto env = parse_recipe("name = 'x'\n[build]\ncommand = 'make'\n[env]\nCC = '{sorce}/cc'\n[artifacts]\na = 'b'\n",
                          "r.toml");
  REQUIRE_FALSE(env.ok());
  CHECK(env.error().message == "r.toml: recipe x env.CC: unknown placeholder {sorce}");
}

TEST_CASE("a recipe's shell braces are its own: only {name} is a placeholder, and {{ is a literal brace") {
  auto r = parse_recipe(
               "name = 'x'\n[build]\ncommand = \"[ -e {build}/done ] || { make -j{jobs} && touch \\\"${HOME}\\\"; }; "
               "awk '{{print $1}' log; echo {}\"\n[artifacts]\na = 'bin/a'\n",
               "r.toml")
               .take();
  auto out = render(r, {"/s", "/b", "/d", 3}).take();
  CHECK(out.build == "[ -e /b/done ] || { make -j3 && touch \"${HOME}\"; }; awk '{print $1}' log; echo {}");
  // An artifact named as TOML allows is a placeholder; a typo in case is refused, not left in.
  auto cl = parse_recipe("name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\nclang-cl = 'bin/clang-cl'\n"
                         "[compile]\ncommand = '{clang-cl} {input} -o {output}'\n",
                         "r.toml");
  CHECK(cl.ok());
  auto typo = parse_recipe("name = 'x'\n[build]\ncommand = 'make -C {Build}'\n[artifacts]\na = 'b'\n", "r.toml");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message == "r.toml: recipe x build.command: unknown placeholder {Build}");
  auto odd = parse_recipe("name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\n'c c' = 'bin/cc'\n", "r.toml");
  REQUIRE_FALSE(odd.ok());
  CHECK(odd.error().message.find("artifact name 'c c' cannot be a placeholder") != std::string::npos);
}

TEST_CASE("the shipped llvm-project recipe renders opt, llc and clang for the host target") {
  auto r = load_recipe("llvm-project");
  REQUIRE(r.ok());
  auto out = render(*r, {"/wt/src", "/wt/build", "/data", 2}).take();
  CHECK(out.configure ==
        "cmake -S /wt/src/llvm -B /wt/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLVM_ENABLE_PROJECTS=clang "
        "-DLLVM_TARGETS_TO_BUILD=host -DLLVM_ENABLE_ASSERTIONS=OFF -DLLVM_INCLUDE_TESTS=OFF "
        "-DLLVM_INCLUDE_BENCHMARKS=OFF -DLLVM_INCLUDE_EXAMPLES=OFF -DCLANG_INCLUDE_TESTS=OFF "
        "-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache");
  CHECK(out.build == "ninja -C /wt/build -j 2 opt llc clang");
  CHECK(out.artifacts.at("opt") == "/wt/build/bin/opt");
  CHECK(out.artifacts.at("llc") == "/wt/build/bin/llc");
  CHECK(out.artifacts.at("clang") == "/wt/build/bin/clang");
  // Left to the build's default (the work tree): at {source} it would keep
  // the {build} include paths absolute, and another work tree would miss.
  CHECK(out.env.count("CCACHE_BASEDIR") == 0);
  CHECK(r->timeout.count() == 8 * 3600);
  CHECK(r->compile_timeout.count() == 600);
  CHECK(load_recipe("sample-compiler").ok());
}

TEST_CASE("outcome names round-trip") {
  for (auto o : {Outcome::Ok, Outcome::ConfigureFailed, Outcome::BuildFailed, Outcome::Timeout, Outcome::MissingArtifact})
    CHECK(parse_outcome(outcome_name(o)) == o);
  CHECK(outcome_name(Outcome::BuildFailed) == "build-failed");
  CHECK_FALSE(parse_outcome("exploded").has_value());
}

TEST_CASE("placeholders become single shell words, whatever the paths hold") {
  auto r = parse_recipe(kRecipe, "demo.toml").take();
  auto out = render(r, {"/d/it's a dir/src", "/d/$(touch x)/build", "/d/`y`", 4}).take();
  CHECK(out.configure ==
        "cmake -S '/d/it'\\''s a dir/src' -B '/d/$(touch x)/build' -DCMAKE_CXX_COMPILER_LAUNCHER=ccache");
  CHECK(out.build == "ninja -C '/d/$(touch x)/build' -j 4");
  // The environment and artifact paths are not shell text: taken as they are.
  CHECK(out.env.at("CCACHE_DIR") == "/d/`y`/ccache");
  CHECK(out.artifacts.at("compiler") == "/d/$(touch x)/build/bin/cc");
}

TEST_CASE("a recipe's jobs caps a sweep's build parallelism, and 0 leaves it alone") {
  builder::Recipe r;
  CHECK(builder::capped_jobs(r, 64) == 64);
  r.jobs = 8;
  CHECK(builder::capped_jobs(r, 64) == 8);
  CHECK(builder::capped_jobs(r, 4) == 4);
}

TEST_CASE("share_agreeing_defaults is a recipe's yes or no, off unless it says so, and in neither hash") {
  const std::string base = "name = 'x'\n[build]\ncommand = 'make'\n[artifacts]\ncompiler = '{build}/cc'\n"
                           "[compile]\ncommand = '{compiler} {input} -o {output} -Oz'\n";
  auto plain = parse_recipe(base, "a.toml").take();
  auto shared = parse_recipe(base + "share_agreeing_defaults = true\n", "b.toml").take();
  CHECK_FALSE(plain.share_agreeing_defaults);
  CHECK(shared.share_agreeing_defaults);
  CHECK(shared.build_hash == plain.build_hash);
  CHECK(shared.content_hash == plain.content_hash);
  CHECK(parse_recipe(base + "share_agreeing_defaults = 'yes'\n", "c.toml").error().message ==
        "c.toml: 'compile.share_agreeing_defaults' must be true or false");
  // Only -Oz keeps LLVM's size cap off the default's own trajectory.
  std::string at_o2 = base;
  at_o2.replace(at_o2.find("-Oz"), 3, "-Oz -O2");
  CHECK(parse_recipe(at_o2 + "share_agreeing_defaults = true\n", "d.toml").error().message ==
        "d.toml: compile.share_agreeing_defaults = true needs compile.command at -Oz, not -O2");
  CHECK(parse_recipe(at_o2, "d.toml").ok());
}

TEST_CASE("a compile line carrying the ML inliner's own options is refused, naming the word") {
  auto err = [](const std::string& compile) {
    auto r = parse_recipe(std::string(kRecipe) + "[compile]\n" + compile, "ml.toml");
    return r ? std::string("parsed") : r.error().message;
  };
  CHECK(err("command = '{compiler} {input} -o {output} -Oz -enable-ml-inliner=release'\n") ==
        "ml.toml: compile.command has '-enable-ml-inliner=release': driftwatch sets the ML inliner's options itself; "
        "take it out");
  CHECK(err("command = '{compiler} {input} -o {output} -Oz'\ncc1 = 'clang -mllvm -inliner-interactive-channel-base=/x'\n")
            .rfind("ml.toml: compile.cc1 has '-inliner-interactive-channel-base=/x'", 0) == 0);
  CHECK(err("command = '{compiler} {input} -o {output} -Oz'\n") == "parsed");
}
