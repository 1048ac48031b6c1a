#include "api/console_files.h"

#include "api/api.h"
#include "api/console/assets.h"

namespace railyard::api {

namespace {

constexpr std::string_view kPrefix = "/console/";

HttpResponse redirect(const std::string& to) {
  HttpResponse r;
  r.status = 302;
  r.content_type = "text/plain; charset=utf-8";
  r.body = "see " + to + "\n";
  r.headers.emplace_back("Location", to);
  return r;
}

}  // namespace

std::optional<HttpResponse> console_file(const HttpRequest& req) {
  const std::string& path = req.path;
  const bool ours = path == "/" || path == "/console" || path.starts_with(kPrefix);
  if (!ours) return std::nullopt;
  if (req.method != "GET") {
    HttpResponse r = error_response(405, req.method + " is not allowed on " + path);
    r.headers.emplace_back("Allow", "GET");
    return r;
  }
  if (path == "/" || path == "/console") return redirect(std::string(kPrefix));
  std::string_view name = std::string_view(path).substr(kPrefix.size());
  if (name.empty()) name = "index.html";
  const console::Asset* a = console::find_asset(name);
  if (!a) return error_response(404, "no console file " + path + " (the console is GET /console/)");
  HttpResponse r;
  r.content_type = std::string(a->content_type);
  r.body = std::string(a->body);
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                         "frame-ancestors 'none'");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("Cache-Control", "no-cache");
  return r;
}

}  // namespace railyard::api
