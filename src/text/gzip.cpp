#include "attn/text/gzip.h"

#include <zlib.h>

#include "attn/core/error.h"

namespace attn::text {

bool is_gzip(const std::string& content) {
  return content.size() >= 2 && static_cast<unsigned char>(content[0]) == 0x1f &&
         static_cast<unsigned char>(content[1]) == 0x8b;
}

namespace {

// zlib's stream, ended however the reading ends.
class Inflater {
 public:
  Inflater() {
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) throw Error("gzip: cannot start zlib");
  }
  ~Inflater() { inflateEnd(&stream_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  z_stream& stream() { return stream_; }

 private:
  z_stream stream_{};
};

}  // namespace

std::string decompress_if_gzip(std::string content, const std::string& origin) {
  if (!is_gzip(content)) return content;
  const auto damaged = [&](const char* what) {
    return Error(origin + ": damaged gzip data (" + what + "); check the file with `gzip -t`");
  };
  Inflater inflater;
  z_stream& z = inflater.stream();
  z.next_in = reinterpret_cast<Bytef*>(content.data());
  z.avail_in = static_cast<uInt>(content.size());  // corpora past 4 GiB compressed: not expected
  if (content.size() > 0xFFFFFFFFu) throw Error(origin + ": compressed file over 4 GiB; decompress it first");
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    const int status = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
    if (status == Z_STREAM_END) {
      // Another member follows (cat a.gz b.gz): read it on; trailing zeros end it.
      if (z.avail_in >= 2 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b) {
        if (inflateReset(&z) != Z_OK) throw damaged("reset");
        continue;
      }
      return out;
    }
    if (status == Z_BUF_ERROR && z.avail_in == 0) throw damaged("cut short");
    if (status != Z_OK) throw damaged(z.msg ? z.msg : "inflate failed");
  }
}

}  // namespace attn::text
