# grantrys Texte auf Deutsch. Fehlt hier eine Nachricht, erscheint sie auf Englisch.
# $brand ist der Name der Installation (--brand-name), $provider der Name eines Anbieters.

## Jede Seite

page-support = Brauchen Sie Hilfe? Support kontaktieren
page-logo-alt = { $brand }

## Die Startseite (/)

home-title = MCP-Connector
home-what = { $brand } ist ein MCP-Connector: Er lässt Ihre KI-Assistenten mit Ihren Abrechnungskonten arbeiten, sobald Sie diese hier verbinden. Er sieht Ihre Passwörter nie, und Sie können ein Konto jederzeit trennen.
home-endpoint = URL des MCP-Servers
home-providers = Konten, die er verbindet
home-configure = Um ihn zu nutzen, fügen Sie die URL des MCP-Servers Ihrem Assistenten als entfernten (HTTP-)MCP-Server hinzu. Braucht er zum ersten Mal eines Ihrer Konten, gibt er Ihnen einen Link, um es zu verbinden.
home-connections = Ihre Verbindungen ansehen und verwalten

## Die Verbindungsseite

connect-title = { $provider } verbinden
connect-heading = Ihr { $provider }-Konto verbinden
connect-asked = Ihr Assistent möchte über { $brand } Ihr { $provider }-Konto verwenden.
connect-signed-in-as = Angemeldet als
connect-account = Konto
connect-access = Angefragter Zugriff
connect-access-none = nur die Anmeldung
connect-continue = Weiter zu { $provider }
connect-note = Sie melden sich direkt bei { $provider } an; { $brand } sieht Ihr Passwort nie. Wenn Sie Ihren Assistenten nicht darum gebeten haben, schließen Sie diese Seite.
connect-key-label = API-Schlüssel von { $provider }
connect-key-site = Site-Name (der Teil vor .chargebee.com)
connect-key-submit = { $provider } verbinden
connect-key-help = Wo Sie einen API-Schlüssel von { $provider } erstellen
connect-key-note = Geben Sie den Schlüssel hier ein, nie im Chat: Er geht nur an { $brand }, nicht an Ihren Assistenten. { $brand } prüft ihn mit einem Aufruf bei { $provider } und bewahrt ihn verschlüsselt auf. Beim Trennen vergisst { $brand } den Schlüssel; bei { $provider } bleibt er gültig, bis Sie ihn dort löschen.
connect-key-malformed = Das sieht nicht nach einem API-Schlüssel aus: Fügen Sie den ganzen Schlüssel ohne Leerzeichen ein. Es wurde nichts gespeichert.
connect-key-site-malformed = Ein Site-Name besteht aus Kleinbuchstaben, Ziffern und Bindestrichen. Es wurde nichts gespeichert.
connect-key-refused = { $provider } hat diesen Schlüssel abgelehnt, oder er darf keine Rechnungen lesen. Es wurde nichts gespeichert; prüfen Sie den Schlüssel und seine Berechtigungen und versuchen Sie es erneut.
connect-key-unchecked = { $provider } war nicht erreichbar, um den Schlüssel zu prüfen; es wurde nichts gespeichert. Versuchen Sie es gleich noch einmal.

## Nach der Anmeldung

connected-title = Konto verbunden
connected-body = Ihr { $provider }-Konto ist verbunden. Kehren Sie zu Ihrem Assistenten zurück: Er macht von selbst weiter.
connected-body-ask-again = Ihr { $provider }-Konto ist verbunden. Kehren Sie zu Ihrem Assistenten zurück und fragen Sie erneut: Er weiß noch nicht, dass Sie sich angemeldet haben.
connected-body-card = Ihr { $provider }-Konto ist verbunden. Kehren Sie zu Ihrem Assistenten zurück und klicken Sie auf seiner Verbindungskarte auf „Weiter“.
connected-body-page = Ihr { $provider }-Konto ist verbunden. Ihre Assistenten können es ab jetzt verwenden; Sie können diese Seite schließen.
connected-body-unsaid = Ihr { $provider }-Konto ist verbunden. Kehren Sie zu Ihrem Assistenten zurück: Macht er nicht von selbst weiter, fragen Sie erneut.
connected-provider = Anbieter
connected-account = Konto
connected-less-title = Verbunden, mit weniger Zugriff als erbeten
connected-less-body = { $provider } hat weniger gewährt als erbeten, daher ist manches (etwa das Erstellen von Rechnungen) nicht möglich. Damit wurde nichts geschrieben. Um es zu erlauben, verbinden Sie sich erneut und gewähren Sie alles, wonach der Anbieter fragt.
connected-unknown-provider = Abrechnungs
connected-manage = Ihre Verbindungen ansehen und verwalten

## Die Seite der Verbindungen

connections-title = Ihre Verbindungen
connections-intro = Angemeldet als { $who }. Diese Konten dürfen Ihre Assistenten über { $brand } verwenden.
connections-none = Sie haben keine Verbindungen. Braucht ein Assistent eines Ihrer Konten, gibt er Ihnen einen Link, um es zu verbinden.
connections-state = Zustand
connections-access = Zugriff
connections-access-none = nur die Anmeldung
connections-since = Verbunden seit
connections-last-used = Zuletzt verwendet
connections-used-by = Zuletzt verwendet über
connections-client-declared = { $client } (ein Name, den die App sich selbst gab, nicht geprüft)
connections-client-blocked = { $client } (vom Betreiber gesperrt: ihre Anfragen werden abgelehnt, Ihre Verbindung bleibt bestehen)
connections-not-yet = noch nicht
connections-ends = Endet endgültig
connections-reconnect = { $name } neu verbinden
connections-disconnect = { $name } trennen
connections-connect-more = Ein Konto verbinden
connections-connect-another = Ein weiteres { $provider }-Konto verbinden
connections-connect = { $provider } verbinden
connections-working = Funktioniert
connections-refresh-failing = Funktioniert, aber { $provider } hat auf die letzte Erneuerung nicht geantwortet; { $brand } versucht es erneut
connections-needs-reauth = Bitte neu verbinden: { $why }
connections-broken-mark = Muss neu verbunden werden
connections-no-longer-accepted = { $provider } akzeptiert den Zugriff von { $brand } nicht mehr
connections-no-such-title = Diese Verbindung gibt es nicht
connections-no-such-body = Sie haben keine Verbindung mit dieser Kennung; vielleicht wurde sie bereits getrennt.

## Datum und Uhrzeit (in UTC)

date-time = { $day }. { $month } { $year }, { $time } UTC
date-first-of-month = 1
date-month-1 = Januar
date-month-2 = Februar
date-month-3 = März
date-month-4 = April
date-month-5 = Mai
date-month-6 = Juni
date-month-7 = Juli
date-month-8 = August
date-month-9 = September
date-month-10 = Oktober
date-month-11 = November
date-month-12 = Dezember

## Trennen

disconnect-title = { $name } trennen?
disconnect-explained = { $brand } vergisst diese Verbindung und bittet { $provider }, den Zugriff zu widerrufen. Ihre Assistenten erreichen dieses Konto dann nicht mehr. Das lässt sich nicht rückgängig machen: Um es wieder zu verwenden, verbinden Sie es neu.
disconnect-button = { $provider } trennen
disconnect-cancel = Abbrechen
disconnect-busy = Die Verbindung zu { $provider } wird gerade erneuert, daher wurde nichts entfernt. Versuchen Sie es in einer Minute noch einmal.
disconnect-changed = Die Verbindung zu { $provider } hat sich nach Ihrer Bestätigung geändert (sie wurde neu verbunden), daher wurde nichts entfernt. Fragen Sie erneut, um die neue zu trennen.
disconnect-updated = Die Verbindung zu { $provider } wurde gerade aktualisiert; nichts wurde entfernt. Versuchen Sie es noch einmal.
disconnect-gone = Es ist kein { $provider }-Konto mehr verbunden; sonst ist nichts zu tun.
disconnect-confirmed = { $provider } getrennt. { $provider } hat bestätigt, dass der Zugriff von { $brand } widerrufen ist.
disconnect-not-offered = { $provider } getrennt: { $brand } hat die Verbindung vergessen. { $provider } bietet { $brand } keinen Weg, den Zugriff zu widerrufen; entfernen Sie die App zusätzlich in Ihren { $provider }-Einstellungen.
disconnect-refused = { $provider } getrennt: { $brand } hat die Verbindung vergessen, aber { $provider } hat den Widerruf des Zugriffs abgelehnt (HTTP { $status }). Der Zugriff endet, wenn seine Tokens ablaufen; Sie können die App auch in Ihren { $provider }-Einstellungen entfernen.
disconnect-unreachable = { $provider } getrennt: { $brand } hat die Verbindung vergessen, aber { $provider } war für den Widerruf des Zugriffs nicht erreichbar. Der Zugriff endet, wenn seine Tokens ablaufen; Sie können die App auch in Ihren { $provider }-Einstellungen entfernen.
disconnect-question = { $name } trennen? { $brand } vergisst diese Verbindung und bittet { $provider }, den Zugriff zu widerrufen. Das lässt sich nicht rückgängig machen: Um es wieder zu verwenden, verbinden Sie es neu.
disconnect-question-title = { $provider } trennen
disconnect-key-explained = { $brand } vergisst diese Verbindung und ihren API-Schlüssel. Ihre Assistenten erreichen dieses Konto nicht mehr. Bei { $provider } bleibt der Schlüssel gültig, bis Sie ihn dort löschen.
disconnect-key-question = { $name } trennen? { $brand } vergisst diese Verbindung und ihren API-Schlüssel; bei { $provider } bleibt der Schlüssel gültig, bis Sie ihn dort löschen. Das lässt sich nicht rückgängig machen: Um das Konto wieder zu nutzen, verbinden Sie es neu.
disconnect-key-forgotten = { $provider } getrennt: { $brand } hat den API-Schlüssel vergessen. Bei { $provider } bleibt er gültig, bis Sie ihn dort löschen.

## Seiten, die eine Anmeldung beenden

error-invalid-link-title = Dieser Anmeldelink ist ungültig
error-invalid-link-body = Der Link ist abgelaufen oder unvollständig. Fragen Sie Ihren Assistenten erneut, dann erhalten Sie einen neuen Link.
error-invalid-response-title = Diese Antwort auf die Anmeldung ist ungültig
error-invalid-response-body = Es wurde nichts verbunden. Bitten Sie Ihren Assistenten um einen neuen Link.
error-expired-title = Diese Anmeldung ist abgelaufen
error-expired-body = Die Rückkehr vom Anbieter hat zu lange gedauert. Bitten Sie Ihren Assistenten um einen neuen Link.
error-other-browser-title = Diese Anmeldung wurde in einem anderen Browser begonnen
error-other-browser-body = Zu Ihrer Sicherheit wurde sie abgebrochen. Öffnen Sie den Link Ihres Assistenten in diesem Browser.
error-other-user-title = Diese Anmeldung gehört jemand anderem
error-other-user-body = Zu Ihrer Sicherheit wurde sie abgebrochen.
error-not-completed-title = Konto nicht verbunden
error-not-completed-body = Die Anmeldung wurde nicht abgeschlossen, daher wurde nichts verbunden. Sie können diese Seite schließen.
error-not-connected-title = Das Konto konnte nicht verbunden werden
error-exchange-failed-body = Der Anbieter hat die Anmeldung nicht abgeschlossen. Fragen Sie Ihren Assistenten erneut, um neu zu beginnen.
error-no-account-body = Der Anbieter hat nicht mitgeteilt, welches Konto verwendet werden soll. Fragen Sie Ihren Assistenten erneut, um neu zu beginnen.
error-wrong-region-body = { $region }. Bitten Sie den Betreiber, es hinzuzufügen.
error-misconfigured-title = Dieser Anbieter ist falsch eingerichtet
error-misconfigured-body = { $brand } kann Sie nicht zu diesem Anbieter weiterleiten. Der Betreiber wurde im Protokoll informiert.
error-unopenable-title = Dieser Connector ist falsch eingerichtet
error-unopenable-body = { $brand } kann auf diesem Server nicht öffnen, was für Sie gespeichert ist: Seine Server teilen ihre Schlüssel nicht. Nichts wurde geändert, und der Betreiber wurde im Protokoll informiert.
error-unavailable-title = { $brand } ist kurz nicht erreichbar
error-unavailable-body = Es wurde nichts geändert. Bitte versuchen Sie es in einer Minute noch einmal.
error-link-of-another-title = Dieser Link gehört jemand anderem
error-link-of-another-body = Der Anmeldelink wurde für eine andere Person ausgestellt. Bitten Sie Ihren eigenen Assistenten um einen Link.
error-bad-form-title = Dieses Formular kann nicht verwendet werden
error-bad-form-body = Das Formular ist abgelaufen oder wurde von einer anderen Website gesendet. Öffnen Sie die Seite erneut und versuchen Sie es noch einmal.
error-login-misconfigured-title = Die Anmeldung ist falsch eingerichtet
error-login-misconfigured-body = { $brand } kann Sie nicht zu Ihrer Anmeldeseite weiterleiten. Der Betreiber wurde im Protokoll informiert.
error-not-found-title = Nicht gefunden
error-not-found-body = Hier gibt es keine Anmeldung.
error-login-unfinished-title = Diese Anmeldung kann nicht abgeschlossen werden
error-login-unfinished-body = Sie ist abgelaufen oder wurde in einem anderen Browser begonnen. Öffnen Sie den Link Ihres Assistenten erneut.
error-not-signed-in-title = Sie sind nicht angemeldet
error-not-signed-in-body = Die Anmeldung wurde nicht abgeschlossen. Öffnen Sie den Link Ihres Assistenten erneut, um es noch einmal zu versuchen.
error-already-connected-title = Bereits verbunden
error-already-connected-body = Diese Anmeldung ist bereits abgeschlossen. Kehren Sie zu Ihrem Assistenten zurück.
error-superseded-title = Eine neuere Anmeldung hat diese ersetzt
error-superseded-body = Sie haben mehrere Anmeldungen begonnen; nur die neuesten können abgeschlossen werden. Verwenden Sie den neuesten Link Ihres Assistenten.
error-still-finishing-title = Diese Anmeldung wird noch abgeschlossen
error-still-finishing-body = Warten Sie einen Moment und laden Sie diese Seite dann neu.
error-already-used-title = Diese Anmeldung wurde bereits verwendet
error-already-used-body = Jede Anmeldung kann nur einmal abgeschlossen werden. Bitten Sie Ihren Assistenten um einen neuen Link.
error-interrupted-title = Diese Anmeldung wurde nicht abgeschlossen
error-interrupted-body = Das Verbinden des Kontos wurde unterbrochen, daher wurde nichts verbunden. Öffnen Sie den Link Ihres Assistenten erneut, um neu zu beginnen.
error-too-many-title = Zu viele Anfragen
error-too-many-body = Warten Sie eine Minute und öffnen Sie dann den Link Ihres Assistenten erneut.

## Nachrichten, die ein MCP-Client der Person zeigt

mcp-connect = Verbinden Sie Ihr { $provider }-Konto, damit { $brand } damit arbeiten kann.
mcp-grant-write = Erlauben Sie { $brand }, in Ihrem { $provider }-Konto Rechnungen zu erstellen und zu ändern: bisher darf es sie nur lesen.
mcp-reconnect = Verbinden Sie Ihr { $provider }-Konto neu: { $why }.
mcp-choose-account = Es sind mehrere { $provider }-Konten verbunden. Welches soll verwendet werden?
mcp-choose-account-field = { $provider }-Konto
mcp-choose-account-broken = { $account } (muss neu verbunden werden: Sie werden gebeten, sich erneut anzumelden)
mcp-confirm-checkbox = Ankreuzen, um fortzufahren. Das lässt sich nicht rückgängig machen.
mcp-void-title = Rechnung { $number } stornieren
mcp-void-question = Rechnung { $invoice } stornieren? Das Stornieren lässt sich nicht rückgängig machen: Die Rechnung bleibt als storniert erhalten und kann nicht mehr bezahlt werden.
mcp-invoice-needs = Um die Rechnung zu erstellen, braucht { $brand }:
invoice-field-email = E-Mail des Kunden
invoice-field-customer-name = Name des Kunden
invoice-field-amount = Betrag
invoice-field-currency = Währung
invoice-field-due-date = Fälligkeitsdatum
invoice-field-description = Beschreibung
invoice-problem-email = Geben Sie eine gültige E-Mail-Adresse ein.
invoice-problem-customer-name = Geben Sie den Namen des Kunden ein (höchstens 200 Zeichen).
invoice-problem-currency = Wählen Sie eine Währung aus der Liste (ein ISO-4217-Code wie EUR).
invoice-problem-amount = Geben Sie einen Betrag über null mit höchstens so vielen Nachkommastellen wie die Währung ein, etwa 120.50.
invoice-problem-due-date = Geben Sie ein Fälligkeitsdatum ab heute ein, als JJJJ-MM-TT.
invoice-problem-description = Halten Sie die Beschreibung unter 500 Zeichen.
mcp-open-link = Öffnen Sie den Link, melden Sie sich beim Anbieter an und kommen Sie dann hierher zurück.

## Warum eine Verbindung erneuert werden muss

reauth-invalid-grant = { $provider } akzeptiert den Zugriff von { $brand } nicht mehr (abgelaufen oder widerrufen)
reauth-no-refresh-token = der Zugriff, den { $provider } gewährt hat, ist abgelaufen
reauth-token-refused = { $provider } verweigert den Zugriff von { $brand }
reauth-access-withdrawn = { $provider } meldet, dass der Zugriff von { $brand } entzogen wurde (Zustimmung, Organisation oder Berechtigung)

## Die Verbindungskarte (eine MCP-App): was eine Person in einem Web-Host liest, der sie zeigt.

card-connect-prompt = Verbinden Sie Ihr { $provider }-Konto, um fortzufahren.
card-connect-button = { $provider } verbinden
card-reconnect-prompt = Ihre { $provider }-Verbindung ({ $account }) muss erneuert werden.
card-reconnect-button = { $provider } neu verbinden
card-connected = { $provider } ist verbunden.
card-connect-another = Weiteres Konto verbinden
card-needs-reauth = muss neu verbunden werden
card-use-account = Dieses verwenden
card-use-message = Verwende mein { $provider }-Konto „{ $account }“.
card-waiting = Eine Anmeldeseite von { $provider } öffnet sich. Melden Sie sich dort an: Diese Karte bemerkt, wenn Sie fertig sind.
card-open-yourself = Falls sich keine Seite geöffnet hat, öffnen Sie diesen Link in Ihrem Browser:
card-expired = Der Anmeldelink ist abgelaufen. Fragen Sie erneut nach einem neuen.
card-done = Ihr { $provider }-Konto { $account } ist verbunden.
card-continue = Weiter
card-continue-message = Ich habe mein { $provider }-Konto { $account } verbunden. Bitte mach weiter.
card-sent = Gesendet. Sie können im Gespräch weitermachen.
card-failed = Diese Karte konnte nicht angezeigt werden.
card-cancelled = Abgebrochen.
card-unnamed = (Konto ohne Namen)
