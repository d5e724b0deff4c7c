use super::*;

fn masked(text: &str) -> String {
    redact(text).into_owned()
}

#[test]
fn redaction_masks_every_form() {
    let cases = [
        ("host=db password=x user=a", "host=db password=*** user=a"),
        ("password = 'pass word' user=a", "password = '***' user=a"),
        ("password='it\\'s a' user=a", "password='***' user=a"),
        ("password=a\\ b user=a", "password=*** user=a"),
        ("postgresql://u:secret@h/db", "postgresql://u:***@h/db"),
        ("postgres://h/db?sslmode=require&password=x&user=a", "postgres://h/db?sslmode=require&password=***&user=a"),
        ("postgres://h/db?%70assword=x", "postgres://h/db?%70assword=***"),
        ("PGPASSWORD=\"a b\" psql -c 1", "PGPASSWORD=\"***\" psql -c 1"),
        ("sslpassword=x", "sslpassword=***"),
        ("cannot connect to `http://u:p@h:9090/`", "cannot connect to `http://u:***@h:9090/`"),
        ("dsn: host=h password=x\nname: y", "dsn: host=h password=***\nname: y"),
        ("password='unterminated", "password='***"),
        ("é password=pässwörd\\é x ü", "é password=*** x ü"),
        ("password='ß\\", "password='***"),
    ];
    for (text, want) in cases {
        assert_eq!(masked(text), want, "{text}");
    }
}

#[test]
fn secret_like_keys_are_masked_after_equals_in_any_case() {
    let cases = [
        ("ipmi_password=x y", "ipmi_password=*** y"),
        ("token=abc&x", "token=***"),
        ("https://h/?access_token=abc&x=1", "https://h/?access_token=***&x=1"),
        ("secret=s api_key=k APIKEY=k2 api-key=k3", "secret=*** api_key=*** APIKEY=*** api-key=***"),
        ("AWS_ACCESS_KEY_ID=a AWS_SECRET_ACCESS_KEY=b", "AWS_ACCESS_KEY_ID=*** AWS_SECRET_ACCESS_KEY=***"),
        ("credentials=c passphrase=p passwd=q", "credentials=*** passphrase=*** passwd=***"),
        ("remote_pass=r db_pwd=d", "remote_pass=*** db_pwd=***"),
        ("--password=x --db-token=t", "--password=*** --db-token=***"),
    ];
    for (text, want) in cases {
        assert_eq!(masked(text), want, "{text}");
    }
}

#[test]
fn secret_like_keys_are_masked_in_yaml_and_json_key_position() {
    let cases = [
        ("password: x\nname: y", "password: \"***\"\nname: y"),
        ("password: a b # note\n", "password: \"***\" # note\n"),
        ("  - ipmi_password: 'x'\n", "  - ipmi_password: '***'\n"),
        ("args: {ipmi_password: x, node: 1}", "args: {ipmi_password: \"***\", node: 1}"),
        ("{\"token\": \"t\", \"n\": 1}", "{\"token\": \"***\", \"n\": 1}"),
        ("{\"api_key\":123,\"n\":1}", "{\"api_key\":\"***\",\"n\":1}"),
        ("password: \"it\\\"s\"", "password: \"***\""),
        ("password: 'it''s'", "password: '***'"),
    ];
    for (text, want) in cases {
        assert_eq!(masked(text), want, "{text}");
    }
    assert_eq!(masked("  - ipmi_password: 'x'\n"), "  - ipmi_password: '***'\n");
}

#[test]
fn command_line_forms_are_masked() {
    let cases = [
        ("ipmitool -H h -U admin -P x power off", "ipmitool -H h -U admin -P *** power off"),
        ("ipmitool -Px", "ipmitool -P***"),
        ("mysql -u root -px db", "mysql -u root -p*** db"),
        ("mysql --password x db", "mysql --password *** db"),
        ("tool --api-token 'a b' go", "tool --api-token '***' go"),
        ("curl -u user:x http://h", "curl -u user:*** http://h"),
        ("curl --user 'user:x y' http://h", "curl --user 'user:***' http://h"),
        ("curl --user=user:x http://h", "curl --user=user:*** http://h"),
        ("curl -H 'Authorization: Bearer abc.def' h", "curl -H 'Authorization: Bearer ***' h"),
        ("curl -H \"Authorization: Basic dXNlcjpw\" h", "curl -H \"Authorization: Basic ***\" h"),
        ("curl -H 'X-Api-Key: k' h", "curl -H 'X-Api-Key: ***' h"),
        ("Authorization: Bearer abc", "Authorization: Bearer ***"),
    ];
    for (text, want) in cases {
        assert_eq!(masked(text), want, "{text}");
    }
}

#[test]
fn a_mask_never_swallows_a_closing_quote() {
    let cases = [
        ("dsn: \"host=h password=x\"", "dsn: \"host=h password=***\""),
        ("exec: 'PGPASSWORD=x psql'", "exec: 'PGPASSWORD=*** psql'"),
        ("{exec: \"mysql -px\", timeout: 5s}", "{exec: \"mysql -p***\", timeout: 5s}"),
        ("[\"--password\", \"x\"]", "[\"--password\", \"x\"]"),
        ("exec: \"PGPASSWORD=\\\"a b\\\" psql\"", "exec: \"PGPASSWORD=\\\"***\\\" psql\""),
        ("exec: \"curl 'http://h/?token=x'\"", "exec: \"curl 'http://h/?token=***'\""),
        ("exec: \"echo password: a b\" # c", "exec: \"echo password: a b\" # c"),
        ("exec: \"password: a b\" # c", "exec: \"password: ***\" # c"),
    ];
    for (text, want) in cases {
        assert_eq!(masked(text), want, "{text}");
    }
}

#[test]
fn redaction_leaves_other_text_alone() {
    for text in [
        "user=passwordless dbname=x",
        "holds a password: give it in PGPASSWORD or ~/.pgpass",
        "postgresql://bench@db/bench",
        "postgresql://db:5432/bench",
        "http://localhost:9090/api/v1/query",
        "password=",
        "password:\n  nested: 1",
        "a :// b:c @d",
        "psql -p 5432 -U bench",
        "passfile=/root/.pgpass compass=n",
        "mkdir -p /tmp/x",
        "curl -u user http://h",
    ] {
        assert!(matches!(redact(text), Cow::Borrowed(_)), "{text} became {}", redact(text));
    }
}

#[test]
fn the_key_predicate_is_one_for_every_mask() {
    for key in ["password", "PGPASSWORD", "ipmi_password", "remote_pass", "access_token", "X-Api-Key", "client_secret"]
    {
        assert!(secret_key(key), "{key}");
    }
    for key in ["passfile", "user", "dsn", "compass", "bypass_cache", "nodes"] {
        assert!(!secret_key(key), "{key}");
    }
}

#[test]
fn json_values_under_secret_keys_are_masked_whatever_they_are() {
    let v = serde_json::json!({
        "dsn": "host=h password=x",
        "n": [1, "postgres://u:p@h"],
        "ipmi_password": 1234,
        "tokens": {"a": "b"},
    });
    let want = serde_json::json!({
        "dsn": "host=h password=***",
        "n": [1, "postgres://u:***@h"],
        "ipmi_password": "***",
        "tokens": "***",
    });
    assert_eq!(redact_json(&v), want);
}

/// The reader the guard is handed: JSON here (this leaf's tests read no YAML either;
/// tests/integration/secrets.rs has a scenario's YAML).
fn read(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str(text).ok()
}

#[test]
fn a_text_the_mask_would_break_is_stored_as_read_and_masked() {
    // an empty value before a closing quote: the mask takes that quote as an opening one
    let text = r#"{"dsn": "password=", "n": 1, "api_token": 7}"#;
    assert_eq!(read(&redact(text)), None);
    let stored = redact_yaml(text, read);
    let body = stored.split_once('\n').map(|(_, b)| b).unwrap_or_default();
    assert_eq!(read(body), Some(serde_json::json!({"dsn": "password=", "n": 1, "api_token": "***"})));
    // a masked text that reads is stored as masked
    assert_eq!(redact_yaml(r#"{"password": "x"}"#, read), r#"{"password": "***"}"#);
    assert!(matches!(redact_yaml("n: 1", read), Cow::Borrowed(_)));
}

#[test]
fn urls_with_credentials_are_told() {
    assert!(url_has_credentials("http://u:p@h:9090/"));
    assert!(url_has_credentials("http://u@h"));
    assert!(!url_has_credentials("http://h:9090/q?a=u@b"));
    assert!(!url_has_credentials("h:9090"));
}

/// A progress line keeps what follows a masked secret: a list in parentheses ends at
/// its `)`, and the rest of the line is shown.
#[test]
fn a_mask_in_a_progress_line_leaves_the_rest_of_the_line() {
    assert_eq!(
        redact("[ 3s] hook nodes.PowerOff (user=admin, password: abc) on h1"),
        "[ 3s] hook nodes.PowerOff (user=admin, password: \"***\") on h1"
    );
    // inside a value, a parenthesis is the value's
    assert_eq!(redact("{password: ab)c, user: x}"), "{password: \"***\", user: x}");
}
