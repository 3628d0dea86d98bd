//! The user's allowlist of hosts for network blocks (`http.request`, `notify.send` webhooks):
//! what an entry may be and which URLs it lets through. Shared with the settings, which check
//! an entry with [`parse_allow_entry`] before saving it.
//!
//! An entry is a scheme, a host and a port, each optional except the host:
//! `api.example.com` (http and https on ports 80 and 443), `127.0.0.1:8080` (both schemes on
//! that port), `https://api.example.com` (https on 443), `https://*.example.com:8443`. Entries
//! are compared the way URLs are (lowercase, IDN as punycode, IPv6 without brackets). Refused
//! as entries: a top-level name alone (`com`, `*.com`), and link-local addresses
//! (169.254.0.0/16, fe80::/10) where cloud metadata services answer; a URL to a link-local
//! address is never allowed, whatever the list says.

use reqwest::Url;

/// One allowlist entry: an optional scheme, a host (or `*.` and a domain for its subdomains)
/// and an optional port. Without a scheme both http and https match; without a port only
/// the scheme's default port (80, 443) does, so `localhost` is not every port of this
/// machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowEntry {
    pub scheme: Option<String>,
    pub wildcard: bool,
    pub host: String,
    pub port: Option<u16>,
}

impl AllowEntry {
    /// The entry as the settings save it: `https://api.example.com:8443`, `*.example.com`,
    /// `127.0.0.1:8080`.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        if let Some(scheme) = &self.scheme {
            text.push_str(scheme);
            text.push_str("://");
        }
        if self.wildcard {
            text.push_str("*.");
        }
        if self.host.contains(':') {
            text.push_str(&format!("[{}]", self.host));
        } else {
            text.push_str(&self.host);
        }
        if let Some(port) = self.port {
            text.push_str(&format!(":{port}"));
        }
        text
    }

    fn matches(&self, scheme: &str, host: &str, port: u16) -> bool {
        if self.scheme.as_deref().is_some_and(|s| s != scheme) {
            return false;
        }
        let wanted_port = self.port.unwrap_or(default_port(scheme));
        if port != wanted_port {
            return false;
        }
        if self.wildcard {
            host.len() > self.host.len()
                && host.ends_with(&self.host)
                && host[..host.len() - self.host.len()].ends_with('.')
        } else {
            host == self.host
        }
    }
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

/// Parses an allowlist entry, or says why it cannot be one: not a host, a path or query in
/// it, a scheme other than http(s), a bare top-level name (`com`, `*.com`: every site), or a
/// link-local address (169.254.0.0/16, fe80::/10: the cloud metadata services).
pub fn parse_allow_entry(entry: &str) -> Result<AllowEntry, &'static str> {
    let entry = entry.trim();
    let (scheme, rest) = match entry.split_once("://") {
        Some((scheme, rest)) => {
            let scheme = scheme.to_ascii_lowercase();
            if scheme != "http" && scheme != "https" {
                return Err("only http and https can be allowed");
            }
            (Some(scheme), rest.trim_end_matches('/'))
        }
        None => (None, entry),
    };
    if rest.contains(['/', '?', '#', '@', ' ']) {
        return Err("write a host, optionally with a scheme and a port; no path");
    }
    let (wildcard, rest) = match rest.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    // The port is whatever follows the last `:` after the host (an IPv6 host is bracketed).
    let (host_text, port) = match rest.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && (!host.contains(':') || host.ends_with(']')) => {
            let port: u16 = port.parse().map_err(|_| "the port is not a number")?;
            if port == 0 {
                return Err("the port is not a number");
            }
            (host, Some(port))
        }
        _ => (rest, None),
    };
    let url = Url::parse(&format!("http://{host_text}/")).map_err(|_| "not a host name")?;
    let Some(host) = url.host_str().map(host_key).filter(|h| !h.is_empty()) else {
        return Err("not a host name");
    };
    if url.port().is_some() || url.path() != "/" {
        return Err("not a host name");
    }
    let ip = host.parse::<std::net::IpAddr>().ok();
    if wildcard && ip.is_some() {
        return Err("a wildcard needs a domain name");
    }
    if ip.is_none() && host != "localhost" && !host.contains('.') {
        return Err("a top-level name alone would allow every site under it");
    }
    if ip.is_some_and(|ip| is_link_local(&ip)) || host == "metadata.google.internal" {
        return Err("link-local and cloud metadata addresses cannot be allowed");
    }
    Ok(AllowEntry {
        scheme,
        wildcard,
        host,
        port,
    })
}

/// 169.254.0.0/16 and fe80::/10 (where cloud metadata services answer), also as an
/// IPv4-mapped IPv6 address.
fn is_link_local(ip: &std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => v4.is_link_local(),
        std::net::IpAddr::V6(v6) => {
            (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_link_local())
        }
    }
}

/// A host as the allowlist compares it: lowercase, no IPv6 brackets, no trailing dot.
pub fn host_key(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// Whether `url` (scheme, host and port) is on the allowlist. A link-local host never is.
pub fn url_allowed(url: &Url, allow_hosts: &[String]) -> bool {
    let host = host_key(url.host_str().unwrap_or_default());
    if host
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| is_link_local(&ip))
    {
        return false;
    }
    let Some(port) = url.port_or_known_default() else {
        return false;
    };
    allow_hosts
        .iter()
        .filter_map(|e| parse_allow_entry(e).ok())
        .any(|entry| entry.matches(url.scheme(), &host, port))
}

/// `scheme://host:port` of a URL, as messages and the redirect events name it.
pub fn site(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port_or_known_default() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(url: &str, entries: &[&str]) -> bool {
        let entries: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
        url_allowed(&Url::parse(url).unwrap(), &entries)
    }

    #[test]
    fn an_entry_is_a_scheme_a_host_and_a_port() {
        let entry = |text: &str| parse_allow_entry(text).map(|e| e.to_text());
        assert_eq!(entry(" API.Example.com "), Ok("api.example.com".into()));
        assert_eq!(
            entry("HTTPS://api.example.com/"),
            Ok("https://api.example.com".into())
        );
        assert_eq!(
            entry("https://api.example.com:8443"),
            Ok("https://api.example.com:8443".into())
        );
        assert_eq!(entry("127.0.0.1:8080"), Ok("127.0.0.1:8080".into()));
        assert_eq!(entry("[::1]:8080"), Ok("[::1]:8080".into()));
        assert_eq!(entry("*.slack.com"), Ok("*.slack.com".into()));
        assert_eq!(entry("localhost"), Ok("localhost".into()));
        for bad in [
            "com",
            "*.com",
            "jp",
            "169.254.169.254",
            "169.254.0.1:80",
            "[fe80::1]",
            "http://[fe80::1%25eth0]",
            "metadata.google.internal",
            "ftp://example.com",
            "example.com/x",
            "a b",
            "*.",
            "host:0",
            "host:99999",
            "*.127.0.0.1",
            "",
            "user@example.com",
        ] {
            assert!(parse_allow_entry(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_url_passes_on_its_scheme_host_and_port() {
        // No port in the entry: only the scheme's default port.
        assert!(allowed("https://api.example.com/v1", &["api.example.com"]));
        assert!(allowed("http://api.example.com/v1", &["api.example.com"]));
        assert!(!allowed(
            "http://api.example.com:8080/v1",
            &["api.example.com"]
        ));
        assert!(!allowed("http://localhost:5432/", &["localhost"]));
        // A port: that port, either scheme; a scheme: that scheme only.
        assert!(allowed("http://127.0.0.1:8080/x", &["127.0.0.1:8080"]));
        assert!(!allowed("http://127.0.0.1:8081/x", &["127.0.0.1:8080"]));
        assert!(!allowed(
            "http://api.example.com/",
            &["https://api.example.com"]
        ));
        assert!(allowed(
            "https://api.example.com:443/",
            &["https://api.example.com"]
        ));
        // Wildcards: subdomains, not look-alikes or the name itself.
        assert!(allowed("https://hooks.slack.com/x", &["*.slack.com"]));
        assert!(!allowed("https://evilslack.com/x", &["*.slack.com"]));
        assert!(!allowed("https://slack.com/x", &["*.slack.com"]));
        // A link-local address never, even when listed some other way.
        assert!(!allowed(
            "http://169.254.169.254/latest/meta-data",
            &["169.254.169.254"]
        ));
        assert!(!allowed(
            "http://[::ffff:169.254.169.254]/",
            &["[::ffff:169.254.169.254]"]
        ));
    }
}
