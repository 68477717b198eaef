// Answers the launcher stand-in (VirtualPods) gives from more than one of its files: a JSON
// body, and the HTML error page of Express's final handler. Internal to cluster/ingress.
#pragma once

#include <string_view>

#include "common/json.h"
#include "net/http.h"

namespace steward::cluster::ingress {

// `body` as application/json; charset=utf-8.
net::HttpResponse JsonResponse(int status, const Json& body);
// The page Express's final handler (finalhandler 2) answers an unrouted request or an error
// with: text/html, the message escaped in a <pre>.
net::HttpResponse ExpressErrorPage(int status, std::string_view message);

}  // namespace steward::cluster::ingress
