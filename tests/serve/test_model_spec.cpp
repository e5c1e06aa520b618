// attn serve's -m NAME=FILE[:TYPE]: a bad or empty type is named as one
// (not reported as a missing file), and a file whose name holds ':' or '='
// is served when it exists.
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "attn/core/error.h"
#include "attn/serve/model_spec.h"
#include "serve_fixture.h"

using namespace attn;
using namespace attn::test;
using attn::serve::ModelSpec;
using attn::serve::parse_model_spec;

namespace {

// parse_model_spec against a file system holding exactly `files`.
ModelSpec parse(const std::string& spec, const std::set<std::string>& files = {"F", "m.attn"}) {
  return parse_model_spec(spec, [&](const std::string& f) { return files.count(f) > 0; });
}

std::string refusal(const std::string& spec, const std::set<std::string>& files = {"F", "m.attn"}) {
  try {
    parse(spec, files);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("serve -m: NAME=FILE:TYPE, each part read when it is well formed", "[serve][nothing-lost-4]") {
  const ModelSpec typed = parse("a=F:int8");
  REQUIRE(typed.name == "a");
  REQUIRE(typed.file == "F");
  REQUIRE(typed.type == model::ComputeType::int8);
  const ModelSpec plain = parse("m.attn");
  REQUIRE(plain.name.empty());
  REQUIRE(plain.file == "m.attn");
  REQUIRE(!plain.type);
  REQUIRE(parse("m.attn:bf16").type == model::ComputeType::bf16);
  // A file that does not exist is the loader's to report (it names the file).
  REQUIRE(parse("a=gone.attn:fp32").file == "gone.attn");
  REQUIRE(parse("gone.attn").file == "gone.attn");
}

TEST_CASE("serve -m: a bad or empty compute type is named as such, with the types, not as a missing file",
          "[serve][nothing-lost-4]") {
  for (const std::string spec : {"a=F:INT8", "a=F:fp16", "F:fp16", "a=gone:int4", "m.attn:Int8"}) {
    INFO(spec);
    const std::string message = refusal(spec);
    REQUIRE(message.find("is not a compute type") != std::string::npos);
    REQUIRE(message.find(":fp32, ") != std::string::npos);
    REQUIRE(message.find(":bf16 or ") != std::string::npos);
    REQUIRE(message.find(":int8") != std::string::npos);
  }
  REQUIRE(refusal("a=F:INT8").find("'INT8' is not a compute type") != std::string::npos);
  for (const std::string spec : {"a=F:", "F:", ":", "a=:"}) {
    INFO(spec);
    REQUIRE(refusal(spec).find("no compute type after ':'") != std::string::npos);
  }
  for (const std::string spec : {"a=", "a=:int8", ":int8"}) {
    INFO(spec);
    REQUIRE(refusal(spec).find("no model file given") != std::string::npos);
  }
  REQUIRE(refusal("my model=F").find("'my model' is not a model name") != std::string::npos);
}

TEST_CASE("serve -m: a file whose name holds ':' or '=' is that file when it exists", "[serve][nothing-lost-4]") {
  const std::set<std::string> files{"m:v2.attn", "m:INT8", "lr=3/x.attn", "x:int8", "x", "a=b"};
  REQUIRE(parse("a=m:v2.attn", files).file == "m:v2.attn");
  REQUIRE(!parse("a=m:v2.attn", files).type);
  REQUIRE(parse("m:INT8", files).file == "m:INT8");  // not a type, but a file
  const ModelSpec typed = parse("m:v2.attn:int8", files);
  REQUIRE(typed.file == "m:v2.attn");
  REQUIRE(typed.type == model::ComputeType::int8);
  // "lr" is a name, but no file is named 3/x.attn: the whole argument is the file.
  const ModelSpec eq = parse("lr=3/x.attn:bf16", files);
  REQUIRE(eq.name.empty());
  REQUIRE(eq.file == "lr=3/x.attn");
  REQUIRE(eq.type == model::ComputeType::bf16);
  // Both x and x:int8 exist: the type is read; the file x:int8 is given with a type after it.
  REQUIRE(parse("x:int8", files).file == "x");
  REQUIRE(parse("x:int8:fp32", files).file == "x:int8");
  REQUIRE(parse("n=a=b", files).file == "a=b");
}

TEST_CASE("serve -m: the command refuses a bad type in one line, exit 2, and serves a file named with ':' and '='",
          "[serve][nothing-lost-4][e2e]") {
  ScratchDir dir;
  const ServeModels& models = serve_models();
  const std::filesystem::path colon = dir.path() / "muse:v2.attn", equals = dir.path() / "lr=3" / "muse.attn";
  std::filesystem::create_directories(equals.parent_path());
  std::filesystem::copy_file(models.muse, colon);
  std::filesystem::copy_file(models.muse, equals);
  for (const std::string type : {"INT8", "fp16", ""}) {
    const RunResult r = run_attn(shell_words({"serve", "-m", "a=" + models.muse + ":" + type, "--port", "0"}));
    require_user_error(r, type.empty() ? "no compute type after ':'" : "'" + type + "' is not a compute type");
    REQUIRE(r.err.find(models.muse + ":int8") != std::string::npos);
  }
  require_user_error(run_attn(shell_words({"serve", "-m", ":", "--port", "0"})), "no compute type after ':'");
  ServeProcess server({}, {"c=" + colon.string(), "c8=" + colon.string() + ":int8", equals.string() + ":bf16"});
  auto c = server.client();
  auto listed = c->Get("/v1/models");
  REQUIRE(listed);
  const nlohmann::json list = nlohmann::json::parse(listed->body)["models"];
  REQUIRE(list.size() == 3);
  REQUIRE(list[0]["file"] == "muse:v2.attn");
  REQUIRE(list[1]["compute_type"] == "int8");
  REQUIRE(list[2]["name"] == "muse");
  REQUIRE(list[2]["file"] == "muse.attn");
  REQUIRE(list[2]["compute_type"] == "bf16");
}
