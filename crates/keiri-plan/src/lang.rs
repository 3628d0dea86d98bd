//! The language of user-facing messages: named by nearly every module, so in a file of its own
//! below them rather than at the crate root, which names them all.

/// The language of user-facing messages.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// Japanese, the default.
    #[default]
    Ja,
    En,
}

impl Lang {
    /// `ja` or `en`, as the language says: the one place a bilingual text is chosen.
    pub fn pick<T>(self, ja: T, en: T) -> T {
        match self {
            Lang::Ja => ja,
            Lang::En => en,
        }
    }
}

impl std::str::FromStr for Lang {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ja" | "jp" | "japanese" => Ok(Lang::Ja),
            "en" | "english" => Ok(Lang::En),
            other => Err(format!("unknown language {other:?} (expected ja or en)")),
        }
    }
}
