//! `grantry connections list | revoke`, `grantry users forget` and `grantry clients block |
//! unblock | list`: arguments checked, changes confirmed, results printed (text, or JSON with
//! `--json`) around [`crate::admin`]. Exit codes: 0 done, 1 failed (or declined, or a
//! connection kept), 2 a bad argument or `--yes` missing, 3 nothing stored for that person
//! (or no such client blocked).

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use crate::admin::{Admin, AdminError, Filter, Listed, Revoked, SeenAs, describe};
use crate::config::ServeArgs;
use crate::config::admin::{
    ClientArgs, ClientsCommand, Confirm, ConnectionsCommand, Output, UsersCommand,
};
use crate::grants::State;
use crate::identity::Principal;
use crate::ids::ProviderId;

/// Why a command stopped, and its exit code.
struct Failure {
    code: u8,
    message: String,
}

impl From<AdminError> for Failure {
    fn from(e: AdminError) -> Self {
        Self {
            code: e.exit_code(),
            message: e.to_string(),
        }
    }
}

fn bad_argument(message: String) -> Failure {
    Failure { code: 2, message }
}

pub(crate) fn connections(command: ConnectionsCommand) -> ExitCode {
    let serve = command.serve_args().clone();
    with_admin(serve, |admin| async move {
        match command {
            ConnectionsCommand::List(args) => {
                let filter = Filter {
                    user: args.user.as_deref().map(principal).transpose()?,
                    provider: args.provider.as_deref().map(provider).transpose()?,
                    state: args.state.as_deref().and_then(State::parse),
                };
                let filtered =
                    filter.user.is_some() || filter.provider.is_some() || filter.state.is_some();
                let listed = admin.list(&filter).await?;
                print_list(&listed, args.output);
                if listed.is_empty() && !args.output.json {
                    let what = if filtered {
                        "no connection matches"
                    } else {
                        "no connections are stored"
                    };
                    eprintln!("grantry: {what}");
                }
                Ok(())
            }
            ConnectionsCommand::Revoke(args) => {
                let user = principal(&args.user)?;
                let at = args.provider.as_deref().map(provider).transpose()?;
                let plan = admin.plan_revoke(&user, at.as_ref()).await?;
                let listed = plan.listed();
                let what = format!(
                    "revoke {} connection(s) of {}",
                    listed.len(),
                    describe(&user)
                );
                confirm(args.confirm, &what, &lines(&listed))?;
                let done = admin.revoke(plan).await.map_err(AdminError::from)?;
                print_revoked(&done, args.output);
                kept_fails(&done)
            }
        }
    })
}

pub(crate) fn users(command: UsersCommand) -> ExitCode {
    let serve = command.serve_args().clone();
    with_admin(serve, |admin| async move {
        let UsersCommand::Forget(args) = command;
        let user = principal(&args.user)?;
        let filter = Filter {
            user: Some(user.clone()),
            ..Filter::default()
        };
        let listed = admin.list(&filter).await?;
        let what = format!(
            "erase {}: revoke their {} connection(s), then remove every sign-in attempt, \
             legacy session, rate counter, webhook delivery and MCP task of theirs",
            describe(&user),
            listed.len()
        );
        confirm(args.confirm, &what, &lines(&listed))?;
        let forgotten = admin.forget(&user).await?;
        if args.output.json {
            out!("{}", to_json(&forgotten));
        } else {
            print_revoked(&forgotten.connections, args.output);
            out!("sign-in attempts removed: {}", forgotten.sign_in_attempts);
            out!("legacy sessions removed: {}", forgotten.legacy_sessions);
            out!("rate counters removed: {}", forgotten.rate_counters);
            out!(
                "webhook deliveries removed: {}",
                forgotten.webhook_deliveries
            );
            out!("MCP tasks removed: {}", forgotten.tasks);
        }
        kept_fails(&forgotten.connections)
    })
}

pub(crate) fn clients(command: ClientsCommand) -> ExitCode {
    let serve = command.serve_args().clone();
    with_admin(serve, |admin| async move {
        match command {
            ClientsCommand::Block(args) => {
                let id = client_id(&args)?;
                // A block may be urgent: what the warning needs (every connection read) must
                // not hold it up when it fails.
                let warning = match admin.seen_as(id).await {
                    Ok(seen) => blocks_nothing(id, seen),
                    Err(e) => Some(format!(
                        "could not read the connections to tell whether `{id}` is a verified \
                         client id ({e}); blocking it anyway"
                    )),
                };
                if let Some(warning) = &warning {
                    eprintln!("grantry: warning: {warning}");
                }
                let what = format!("refuse the MCP client `{id}` the use of every connection");
                confirm(args.confirm, &what, &[])?;
                let newly = admin.block(id).await?;
                let done = if newly { "blocked" } else { "already blocked" };
                print_change(&args, done, warning.as_deref());
                Ok(())
            }
            ClientsCommand::Unblock(args) => {
                let id = client_id(&args)?;
                let what = format!("let the MCP client `{id}` use connections again");
                confirm(args.confirm, &what, &[])?;
                admin.unblock(id).await?;
                print_change(&args, "unblocked", None);
                Ok(())
            }
            ClientsCommand::List(args) => {
                let blocked = admin.blocked().await?;
                if args.output.json {
                    out!("{}", to_json(&blocked));
                    return Ok(());
                }
                for each in &blocked {
                    out!("{} blocked={}", each.client_id, each.blocked_at);
                }
                if blocked.is_empty() {
                    eprintln!("grantry: no clients are blocked");
                }
                Ok(())
            }
        }
    })
}

/// A client id as an issuer writes one: not empty, printable, of a sane length.
fn client_id(args: &ClientArgs) -> Result<&str, Failure> {
    let id = args.client_id.as_str();
    if id.is_empty() || id.len() > 255 || id.chars().any(char::is_control) {
        return Err(bad_argument(
            "CLIENT_ID: give the client id as its tokens carry it (1 to 255 printable characters)"
                .into(),
        ));
    }
    Ok(id)
}

/// What `clients block` warns of a block sure to refuse nobody.
fn blocks_nothing(id: &str, seen: SeenAs) -> Option<String> {
    let why = match seen {
        SeenAs::Verified | SeenAs::Unseen => return None,
        SeenAs::DeclaredOnly => format!(
            "no connection was last used through a verified client with the id `{id}`, only \
             through a client that gave itself that name (unverified): blocks match verified \
             client ids only, so this may block nothing. `grantry connections list` shows the \
             client each connection was last used through; block one it shows without \
             \"(unverified)\""
        ),
        SeenAs::NoneVerified => format!(
            "this grantry verifies no MCP client (`--identity dev`: `{id}` can only be a name a \
             client gave itself): blocks match verified client ids only, so this blocks \
             nothing. Under `--identity oidc`, `grantry connections list` shows the verified \
             id each connection was last used through"
        ),
    };
    Some(why)
}

/// The result on standard output; with `--json`, a `warning` given on standard error too.
fn print_change(args: &ClientArgs, done: &str, warning: Option<&str>) {
    if args.output.json {
        let mut change = serde_json::json!({"client_id": args.client_id, "result": done});
        if let Some(warning) = warning {
            change["warning"] = warning.into();
        }
        out!("{}", to_json(&change));
    } else {
        out!("{}: {done}", args.client_id);
    }
}

/// Resolves the settings, builds the operators' parts, and runs `work` on them.
fn with_admin<F, Fut>(serve: ServeArgs, work: F) -> ExitCode
where
    F: FnOnce(Admin) -> Fut,
    Fut: std::future::Future<Output = Result<(), Failure>>,
{
    let config = match super::configure(serve) {
        Ok(config) => config,
        Err(refused) => return refused,
    };
    crate::program::start_logging(config.log_format);
    super::install_tls_provider();
    let runtime = tokio::runtime::Runtime::new().expect("the tokio runtime starts");
    let outcome = runtime.block_on(async move {
        let admin = crate::startup::admin(&config).await.map_err(|e| Failure {
            code: 1,
            message: e.to_string(),
        })?;
        work(admin).await
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("grantry: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

fn principal(user: &[String]) -> Result<Principal, Failure> {
    match user {
        [issuer, subject] if !issuer.is_empty() && !subject.is_empty() => Ok(Principal {
            issuer: issuer.clone(),
            subject: subject.clone(),
        }),
        _ => Err(bad_argument(
            "--user: give the issuer and the subject, neither empty".into(),
        )),
    }
}

fn provider(id: &str) -> Result<ProviderId, Failure> {
    id.parse()
        .map_err(|e| bad_argument(format!("--provider: `{id}` is no provider id: {e}")))
}

/// Goes ahead with `what` if `--yes` was given, or the person at the terminal says so; what
/// it touches (`shown`) first (on standard error: standard output is the result).
fn confirm(confirm: Confirm, what: &str, shown: &[String]) -> Result<(), Failure> {
    if confirm.yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(bad_argument(format!(
            "this would {what}; nothing was changed: pass --yes to go ahead \
             (standard input is not a terminal)"
        )));
    }
    let mut err = std::io::stderr().lock();
    for each in shown {
        let _ = writeln!(err, "  {each}");
    }
    let _ = write!(err, "This will {what}. Go ahead? [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    match answer.trim().to_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(Failure {
            code: 1,
            message: "not confirmed: nothing was changed".into(),
        }),
    }
}

/// A kept connection makes the command fail, so a script notices and runs it again.
fn kept_fails(done: &[Revoked]) -> Result<(), Failure> {
    let kept = done.iter().filter(|r| !r.outcome.removed()).count();
    if kept == 0 {
        return Ok(());
    }
    Err(Failure {
        code: 1,
        message: format!("{kept} connection(s) were kept (in use or changed): run it again"),
    })
}

fn print_list(listed: &[Listed], output: Output) {
    if output.json {
        out!("{}", to_json(&listed));
        return;
    }
    for each in listed {
        out!("{}", line(each));
    }
}

fn print_revoked(done: &[Revoked], output: Output) {
    if output.json {
        out!("{}", to_json(&done));
        return;
    }
    for each in done {
        out!("{}: {}", line(&each.connection), each.outcome.describe());
    }
}

fn lines(listed: &[Listed]) -> Vec<String> {
    listed.iter().map(line).collect()
}

/// One connection on one line.
fn line(c: &Listed) -> String {
    let account = c
        .account
        .as_ref()
        .map(|a| format!(" account={:?} ({})", a.name, a.id))
        .unwrap_or_default();
    let reason = c
        .reason
        .as_ref()
        .map(|r| format!(" ({r})"))
        .unwrap_or_default();
    let used = c.last_used_at.as_deref().unwrap_or("never");
    let by = match &c.last_used_by {
        Some(by) if by.verified => format!(" last_used_by={:?}", by.client),
        Some(by) => format!(" last_used_by={:?} (unverified)", by.client),
        None => String::new(),
    };
    format!(
        "{} {} {} {}{reason}{account} connected={} last_used={used}{by} id={}",
        c.issuer, c.subject, c.provider, c.state, c.connected_at, c.connection_id
    )
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("the result serializes")
}
