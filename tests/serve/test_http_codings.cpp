// The codings and expectations attn serve refuses (serve/http_codings.h),
// without a server: lists split over fields, case, empty elements.
#include <catch2/catch.hpp>

#include <string_view>
#include <vector>

#include "attn/serve/http_codings.h"

using namespace attn::serve;
using Fields = std::vector<std::string_view>;

namespace {
int status(const std::optional<HttpReply>& r) { return r ? r->status : 0; }
}  // namespace

TEST_CASE("HTTP codings: Transfer-Encoding is chunked alone or absent; any other coding is 501",
          "[serve][nothing-lost-4]") {
  CHECK(status(transfer_coding_refusal({}, false)) == 0);
  for (const Fields& ok : {Fields{"chunked"}, Fields{"Chunked"}, Fields{" CHUNKED\t"}, Fields{", chunked,"}}) {
    INFO(ok.front());
    CHECK(status(transfer_coding_refusal(ok, false)) == 0);
  }
  for (const Fields& other :
       {Fields{"gzip, chunked"}, Fields{"gzip"}, Fields{"chunked, gzip"}, Fields{"identity"}, Fields{"gzip", "chunked"},
        Fields{"deflate,chunked"}, Fields{"chunked;ext=1"}, Fields{"x-custom, chunked"}}) {
    INFO(other.front());
    const auto r = transfer_coding_refusal(other, false);
    CHECK(status(r) == 501);
    CHECK(r->body.find("not implemented") != std::string::npos);
  }
  CHECK(transfer_coding_refusal({"gzip, chunked"}, false)->body.find("\\\"gzip\\\"") != std::string::npos);
  // Faulty framing: 400.
  CHECK(status(transfer_coding_refusal({"chunked, chunked"}, false)) == 400);
  CHECK(status(transfer_coding_refusal({"chunked", "chunked"}, false)) == 400);
  CHECK(status(transfer_coding_refusal({""}, false)) == 400);
  CHECK(status(transfer_coding_refusal({"chunked"}, true)) == 400);  // HTTP/1.0
}

TEST_CASE("HTTP codings: a content coding on a request body is 415 with Accept-Encoding: identity",
          "[serve][nothing-lost-4]") {
  CHECK(status(content_coding_refusal({})) == 0);
  CHECK(status(content_coding_refusal({"identity"})) == 0);
  for (const Fields& coded : {Fields{"gzip"}, Fields{"GZIP"}, Fields{"deflate"}, Fields{"br"}, Fields{"identity, gzip"},
                              Fields{"identity", "zstd"}}) {
    INFO(coded.front());
    const auto r = content_coding_refusal(coded);
    REQUIRE(status(r) == 415);
    CHECK(r->headers == std::vector<std::pair<std::string, std::string>>{{"Accept-Encoding", "identity"}});
  }
}

TEST_CASE("HTTP codings: an expectation other than 100-continue is 417", "[serve][nothing-lost-4]") {
  CHECK(status(expectation_refusal({})) == 0);
  CHECK(status(expectation_refusal({"100-continue"})) == 0);
  CHECK(status(expectation_refusal({"100-Continue"})) == 0);
  CHECK(expects_continue({"100-CONTINUE"}));
  CHECK(!expects_continue({}));
  CHECK(!expects_continue({""}));
  for (const Fields& other :
       {Fields{"foo"}, Fields{"100-continue, foo"}, Fields{"100-continue", "bar=1"}, Fields{"200-ok"}}) {
    INFO(other.front());
    CHECK(status(expectation_refusal(other)) == 417);
  }
}
