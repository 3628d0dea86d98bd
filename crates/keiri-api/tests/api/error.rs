use keiri_api::*;

fn code<E>(e: &E) -> ErrorCode
where
    for<'a> &'a E: Into<ErrorCode>,
{
    e.into()
}

/// The same lower error gets the same API code whichever crate carries it (the string
/// tables this replaced disagreed: the planner's incomplete configuration was
/// `LLM_FAILED`, the chat's `LLM_NOT_CONFIGURED`).
#[test]
fn a_lower_error_has_one_code_wherever_it_surfaces() {
    let incomplete = || keiri_llm::Error::ConfigIncomplete {
        provider: keiri_llm::ProviderKind::Azure,
        missing: vec!["AZURE_OPENAI_ENDPOINT"],
    };
    assert_eq!(code(&incomplete()), ErrorCode::LlmNotConfigured);
    assert_eq!(
        code(&keiri_design::Error::Llm {
            stage: "skeleton",
            source: incomplete()
        }),
        ErrorCode::LlmNotConfigured
    );
    assert_eq!(
        code(&keiri_agent::Error::Llm(incomplete())),
        ErrorCode::LlmNotConfigured
    );
    assert_eq!(
        code(&keiri_design::Error::Llm {
            stage: "wiring",
            source: keiri_llm::Error::Cancelled
        }),
        ErrorCode::Cancelled
    );
    assert_eq!(
        code(&keiri_agent::Error::Llm(keiri_llm::Error::Timeout {
            after: std::time::Duration::from_secs(1),
            attempts: 2
        })),
        ErrorCode::LlmFailed
    );
}

#[test]
fn path_errors_keep_their_meaning_through_every_crate() {
    let changed = || keiri_fs::Error::Changed {
        path: "book.xlsx".into(),
    };
    assert_eq!(code(&changed()), ErrorCode::ChangeConflict);
    assert_eq!(
        code(&keiri_agent::Error::Path(changed())),
        ErrorCode::ChangeConflict
    );
    assert_eq!(
        code(&keiri_xlsx::Error::Path(changed())),
        ErrorCode::ChangeConflict
    );
    let missing = keiri_fs::Error::Io {
        action: "reading",
        path: "a.csv".into(),
        source: std::io::Error::from(std::io::ErrorKind::NotFound),
    };
    assert_eq!(code(&missing), ErrorCode::NotFound);
    assert_eq!(code(&keiri_docs::Error::Path(missing)), ErrorCode::NotFound);
    let denied = keiri_fs::Error::Refused {
        path: "/etc/passwd".into(),
        reason: "outside the workspace",
    };
    assert_eq!(
        code(&keiri_diff::Error::Path(denied)),
        ErrorCode::PathDenied
    );
}
