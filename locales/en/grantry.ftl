# grantry's words, in English: the reference catalog. Every message here must exist in the
# others too (a test checks); one missing there reads in English.
# $brand is the deployment's name (--brand-name), $provider a provider's display name.

## Every page

page-support = Need help? Contact support
page-logo-alt = { $brand }
lang-probe-english-only = English only: this message tests the fallback to English.

## The start page (/)

home-title = MCP connector
home-what = { $brand } is an MCP connector: it lets your AI assistants work with your billing accounts, once you connect them here. It never sees your passwords, and you can disconnect an account at any time.
home-endpoint = MCP server URL
home-providers = Accounts it connects
home-configure = To use it, add the MCP server URL to your assistant as a remote (HTTP) MCP server. When it first needs one of your accounts, it gives you a link to connect it.
home-connections = See and manage your connections

## The connect page

connect-title = Connect { $provider }
connect-heading = Connect your { $provider } account
connect-asked = Your assistant asked to use your { $provider } account through { $brand }.
connect-signed-in-as = Signed in as
connect-account = Account
connect-access = Access asked for
connect-access-none = none beyond sign-in
connect-continue = Continue to { $provider }
connect-note = You will sign in at { $provider } itself; { $brand } never sees your password. If you did not ask your assistant for this, close this page.
connect-key-label = API key from { $provider }
connect-key-site = Site name (the part before .chargebee.com)
connect-key-submit = Connect { $provider }
connect-key-help = Where to create a { $provider } API key
connect-key-note = Type the key here, never in the chat: it goes to { $brand } alone, not to your assistant. { $brand } checks it with one call to { $provider } and keeps it encrypted. Disconnecting makes { $brand } forget the key; it stays valid at { $provider } until you delete it there.
connect-key-malformed = That does not look like an API key: paste the whole key, without spaces. Nothing was stored.
connect-key-site-malformed = A site name is lowercase letters, digits and hyphens. Nothing was stored.
connect-key-refused = { $provider } refused this key, or it cannot read invoices. Nothing was stored; check the key and its permissions, then try again.
connect-key-unchecked = { $provider } could not be reached to check the key, so nothing was stored. Try again in a moment.

## After the sign-in

connected-title = Account connected
connected-body = Your { $provider } account is connected. Return to your assistant: it will continue on its own.
connected-body-ask-again = Your { $provider } account is connected. Return to your assistant and ask it again: it does not know yet that you signed in.
connected-body-card = Your { $provider } account is connected. Return to your assistant and press Continue on its connect card.
connected-body-page = Your { $provider } account is connected. Your assistants can use it from now on; you can close this page.
connected-body-unsaid = Your { $provider } account is connected. Return to your assistant: if it does not continue on its own, ask it again.
connected-provider = Provider
connected-account = Account
connected-less-title = Connected, with less access than asked
connected-less-body = { $provider } granted less than was asked for, so some things you asked for (such as creating invoices) cannot be done. Nothing was written with it. To allow them, connect again and grant everything the provider asks about.
connected-unknown-provider = billing
connected-manage = See and manage your connections

## The connections page

connections-title = Your connections
connections-intro = Signed in as { $who }. These are the accounts your assistants may use through { $brand }.
connections-none = You have no connections. When an assistant needs one of your accounts, it gives you a link to connect it.
connections-state = State
connections-access = Access
connections-access-none = sign-in only
connections-since = Connected since
connections-last-used = Last used
connections-not-yet = not yet
connections-used-by = Last used through
connections-client-declared = { $client } (a name the app gave itself, not verified)
connections-client-blocked = { $client } (blocked by the operator: its requests are refused, your connection stays)
connections-ends = Ends for good
connections-reconnect = Reconnect { $name }
connections-disconnect = Disconnect { $name }
connections-connect-more = Connect an account
connections-connect-another = Connect another { $provider } account
connections-connect = Connect { $provider }
connections-working = Working
connections-refresh-failing = Working, but { $provider } did not answer the last refresh; { $brand } tries again
connections-needs-reauth = Needs you to reconnect: { $why }
connections-broken-mark = Needs reconnecting
connections-no-longer-accepted = { $provider } no longer accepts { $brand }'s access
connections-no-such-title = No such connection
connections-no-such-body = You have no connection with this id; it may have been disconnected already.

## Dates and times, in UTC (a page does not know the reader's time zone); $day is the
## day of the month (date-first-of-month on the first), $time hours:minutes

date-time = { $day } { $month } { $year }, { $time } UTC
date-first-of-month = 1
date-month-1 = January
date-month-2 = February
date-month-3 = March
date-month-4 = April
date-month-5 = May
date-month-6 = June
date-month-7 = July
date-month-8 = August
date-month-9 = September
date-month-10 = October
date-month-11 = November
date-month-12 = December

## Disconnecting

disconnect-title = Disconnect { $name }?
disconnect-explained = { $brand } will forget this connection and ask { $provider } to revoke its access. Your assistants will no longer reach this account. This cannot be undone: to use it again you would connect it anew.
disconnect-button = Disconnect { $provider }
disconnect-cancel = Cancel
disconnect-busy = The { $provider } connection is being refreshed right now, so nothing was removed. Try again in a minute.
disconnect-changed = The { $provider } connection changed after you confirmed (it was connected again), so nothing was removed. Ask again to disconnect the new one.
disconnect-updated = The { $provider } connection was being updated; nothing was removed. Try again.
disconnect-gone = No { $provider } account is connected any more; nothing else to do.
disconnect-confirmed = Disconnected { $provider }. { $provider } confirmed that { $brand }'s access is revoked.
disconnect-not-offered = Disconnected { $provider }: { $brand } has forgotten the connection. { $provider } offers no way for { $brand } to revoke its access; remove the app in your { $provider } settings as well.
disconnect-refused = Disconnected { $provider }: { $brand } has forgotten the connection, but { $provider } refused to revoke its access (HTTP { $status }). The access ends when its tokens expire; you can also remove the app in your { $provider } settings.
disconnect-unreachable = Disconnected { $provider }: { $brand } has forgotten the connection, but { $provider } could not be reached to revoke its access. The access ends when its tokens expire; you can also remove the app in your { $provider } settings.
disconnect-question = Disconnect { $name }? { $brand } will forget this connection and ask { $provider } to revoke its access. This cannot be undone: to use it again you would connect it anew.
disconnect-question-title = Disconnect { $provider }
disconnect-key-explained = { $brand } will forget this connection and its API key. Your assistants will no longer reach this account. The key stays valid at { $provider } until you delete it there.
disconnect-key-question = Disconnect { $name }? { $brand } will forget this connection and its API key; the key stays valid at { $provider } until you delete it there. This cannot be undone: to use it again you would connect it anew.
disconnect-key-forgotten = Disconnected { $provider }: { $brand } has forgotten the API key. It stays valid at { $provider } until you delete it there.

## Pages that stop a sign-in

error-invalid-link-title = This sign-in link is not valid
error-invalid-link-body = The link is expired or incomplete. Ask your assistant again and it will give you a new link.
error-invalid-response-title = This sign-in response is not valid
error-invalid-response-body = Nothing was connected. Ask your assistant again for a new link.
error-expired-title = This sign-in expired
error-expired-body = It took too long to come back from the provider. Ask your assistant again for a new link.
error-other-browser-title = This sign-in was started in another browser
error-other-browser-body = For your safety it was stopped. Open the link your assistant gave you in this browser.
error-other-user-title = This sign-in belongs to someone else
error-other-user-body = For your safety it was stopped.
error-not-completed-title = Account not connected
error-not-completed-body = The sign-in was not completed, so nothing was connected. You can close this page.
error-not-connected-title = The account could not be connected
error-exchange-failed-body = The provider did not complete the sign-in. Ask your assistant again to start over.
error-no-account-body = The provider did not say which account to use. Ask your assistant again to start over.
error-wrong-region-body = { $region }. Ask the operator to add it.
error-misconfigured-title = This provider is misconfigured
error-misconfigured-body = { $brand } cannot send you to this provider. The operator has been told in the log.
error-unopenable-title = This connector is misconfigured
error-unopenable-body = { $brand } cannot open what it stored for you on this server: its servers do not share their keys. Nothing was changed, and the operator has been told in the log.
error-unavailable-title = { $brand } is unavailable for a moment
error-unavailable-body = Nothing was changed. Please try again in a minute.
error-link-of-another-title = This link belongs to someone else
error-link-of-another-body = The sign-in link was issued to another user. Ask your own assistant for a link.
error-bad-form-title = This form cannot be used
error-bad-form-body = The form expired or was sent from another site. Open the page again and retry.
error-login-misconfigured-title = Sign-in is misconfigured
error-login-misconfigured-body = { $brand } cannot send you to your sign-in page. The operator has been told in the log.
error-not-found-title = Not found
error-not-found-body = There is no sign-in here.
error-login-unfinished-title = This sign-in cannot be finished
error-login-unfinished-body = It expired or was started in another browser. Open the link from your assistant again.
error-not-signed-in-title = You are not signed in
error-not-signed-in-body = The sign-in was not completed. Open the link from your assistant again to retry.
error-already-connected-title = Already connected
error-already-connected-body = This sign-in already finished. Return to your assistant.
error-superseded-title = A newer sign-in replaced this one
error-superseded-body = You started several sign-ins; only the newest ones can finish. Use the latest link from your assistant.
error-still-finishing-title = This sign-in is still finishing
error-still-finishing-body = Wait a moment, then reload this page.
error-already-used-title = This sign-in was already used
error-already-used-body = Each sign-in can be completed once. Ask your assistant again for a new link.
error-interrupted-title = This sign-in did not finish
error-interrupted-body = Connecting the account was interrupted, so nothing was connected. Open the link from your assistant again to start over.
error-too-many-title = Too many requests
error-too-many-body = Wait a minute, then open the link from your assistant again.

## Messages an MCP client shows the person

mcp-connect = Connect your { $provider } account so { $brand } can act on it.
mcp-grant-write = Allow { $brand } to create and change invoices in your { $provider } account: so far it may only read them.
mcp-reconnect = Reconnect your { $provider } account: { $why }.
mcp-choose-account = Several { $provider } accounts are connected. Which one should be used?
mcp-choose-account-field = { $provider } account
mcp-choose-account-broken = { $account } (needs reconnecting: you will be asked to sign in again)
mcp-confirm-checkbox = Tick to go ahead. This cannot be undone.
mcp-void-title = Void invoice { $number }
mcp-void-question = Void invoice { $invoice }? Voiding cannot be undone: the invoice stays on record as void and can no longer be paid.
mcp-invoice-needs = To create the invoice, { $brand } needs:
invoice-field-email = Customer email
invoice-field-customer-name = Customer name
invoice-field-amount = Amount
invoice-field-currency = Currency
invoice-field-due-date = Due date
invoice-field-description = Description
invoice-problem-email = Enter a valid email address.
invoice-problem-customer-name = Enter the customer's name (at most 200 characters).
invoice-problem-currency = Choose a currency from the list (an ISO 4217 code such as EUR).
invoice-problem-amount = Enter an amount greater than zero with at most the currency's decimals, like 120.50.
invoice-problem-due-date = Enter a due date of today or later, as YYYY-MM-DD.
invoice-problem-description = Keep the description under 500 characters.
mcp-open-link = Open the link, sign in at the provider, then come back here.

## Why a connection must be renewed

reauth-invalid-grant = { $provider } no longer accepts { $brand }'s access (it expired or was revoked)
reauth-no-refresh-token = the access { $provider } gave has expired
reauth-token-refused = { $provider } refuses { $brand }'s access
reauth-access-withdrawn = { $provider } says { $brand }'s access was withdrawn (consent, organisation or permission)

## The connect card (an MCP App): what a person reads in a web host that shows it. The card
## fills in { $provider } and { $account } itself.

card-connect-prompt = Connect your { $provider } account to continue.
card-connect-button = Connect { $provider }
card-reconnect-prompt = Your { $provider } connection ({ $account }) needs to be renewed.
card-reconnect-button = Reconnect { $provider }
card-connected = { $provider } is connected.
card-connect-another = Connect another account
card-needs-reauth = needs reconnecting
card-use-account = Use this one
card-use-message = Use my { $provider } account “{ $account }”.
card-waiting = A { $provider } sign-in page is opening. Finish signing in there: this card notices when you are done.
card-open-yourself = If no page opened, open this link in your browser:
card-expired = The sign-in link has expired. Ask again for a new one.
card-done = Your { $provider } account { $account } is connected.
card-continue = Continue
card-continue-message = I have connected my { $provider } account { $account }. Please continue.
card-sent = Sent. You can carry on in the conversation.
card-failed = This card could not be shown.
card-cancelled = Cancelled.
card-unnamed = (unnamed account)
