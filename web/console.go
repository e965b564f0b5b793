package web

import "net/http"

// consoleAssetTypes lists the console's files served under
// /console/assets/; anything else there is a 404.
var consoleAssetTypes = map[string]string{
	"console.js":  "text/javascript; charset=utf-8",
	"console.css": "text/css; charset=utf-8",
}

// Console serves the fleet console (built by console/build.sh into
// dist/console): its page at /console, /console/ and every path below,
// where the app routes by the path (history API), and its assets at
// /console/assets/<file>, with the playground's Content-Security-Policy,
// caching and encodings. Mount it at /console and /console/ unstripped:
// the page links its assets and pages by absolute /console/ paths.
func Console() http.Handler {
	mux := http.NewServeMux()
	index := page(mountAssets(mux, "console/", "/console/assets/", consoleAssetTypes, mustRead("console/index.html")))
	mux.Handle("GET /console", index)
	mux.Handle("GET /console/{path...}", index)
	// An asset not listed is missing, not a page of the app.
	mux.Handle("GET /console/assets/", http.NotFoundHandler())
	return mux
}
