public import SyncHTTPServer

extension ConsoleService {
    /// The console's page, script and style sheet, under `/console`: fixed files with no data in
    /// them, served without credentials under ``StaticPage/strictPolicy`` (no inline script or style,
    /// nothing from elsewhere). The script signs in against ``ConsoleService`` with the operator's
    /// name and password and fetches everything it shows.
    public static let pages: [StaticPage] = {
        let html = PackageResources.console_html
        return [
            StaticPage(path: "/console", contentType: "text/html; charset=utf-8", body: html),
            StaticPage(path: "/console/", contentType: "text/html; charset=utf-8", body: html),
            StaticPage(path: "/console/console.js", contentType: "text/javascript; charset=utf-8", body: PackageResources.console_js),
            StaticPage(path: "/console/console.css", contentType: "text/css; charset=utf-8", body: PackageResources.console_css),
        ]
    }()
}
