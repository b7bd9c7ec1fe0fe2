# Les textes de grantry en français. Un message absent ici s'affiche en anglais.
# $brand est le nom du déploiement (--brand-name), $provider le nom d'un fournisseur.

## Chaque page

page-support = Besoin d'aide ? Contacter le support
page-logo-alt = { $brand }

## La page d'accueil (/)

home-title = Connecteur MCP
home-what = { $brand } est un connecteur MCP : il permet à vos assistants IA d'utiliser vos comptes de facturation, une fois que vous les avez connectés ici. Il ne voit jamais vos mots de passe, et vous pouvez déconnecter un compte à tout moment.
home-endpoint = URL du serveur MCP
home-providers = Comptes qu'il connecte
home-configure = Pour l'utiliser, ajoutez l'URL du serveur MCP à votre assistant comme serveur MCP distant (HTTP). Lorsqu'il a besoin pour la première fois de l'un de vos comptes, il vous donne un lien pour le connecter.
home-connections = Voir et gérer vos connexions

## La page de connexion

connect-title = Connecter { $provider }
connect-heading = Connecter votre compte { $provider }
connect-asked = Votre assistant souhaite utiliser votre compte { $provider } via { $brand }.
connect-signed-in-as = Connecté en tant que
connect-account = Compte
connect-access = Accès demandé
connect-access-none = rien au-delà de la connexion
connect-continue = Continuer vers { $provider }
connect-note = Vous vous connecterez directement chez { $provider } ; { $brand } ne voit jamais votre mot de passe. Si vous n'avez rien demandé à votre assistant, fermez cette page.
connect-key-label = Clé d'API de { $provider }
connect-key-site = Nom du site (la partie avant .chargebee.com)
connect-key-submit = Connecter { $provider }
connect-key-help = Où créer une clé d'API { $provider }
connect-key-note = Saisissez la clé ici, jamais dans la conversation : elle ne va qu'à { $brand }, pas à votre assistant. { $brand } la vérifie par un appel à { $provider } et la conserve chiffrée. En déconnectant, { $brand } oublie la clé ; elle reste valable chez { $provider } jusqu'à ce que vous l'y supprimiez.
connect-key-malformed = Cela ne ressemble pas à une clé d'API : collez la clé entière, sans espaces. Rien n'a été enregistré.
connect-key-site-malformed = Un nom de site se compose de minuscules, de chiffres et de tirets. Rien n'a été enregistré.
connect-key-refused = { $provider } a refusé cette clé, ou elle ne peut pas lire les factures. Rien n'a été enregistré ; vérifiez la clé et ses autorisations, puis réessayez.
connect-key-unchecked = { $provider } n'a pas pu être joint pour vérifier la clé ; rien n'a été enregistré. Réessayez dans un instant.

## Après la connexion

connected-title = Compte connecté
connected-body = Votre compte { $provider } est connecté. Revenez à votre assistant : il poursuivra de lui-même.
connected-body-ask-again = Votre compte { $provider } est connecté. Revenez à votre assistant et redemandez-lui : il ne sait pas encore que vous vous êtes connecté.
connected-body-card = Votre compte { $provider } est connecté. Revenez à votre assistant et appuyez sur Continuer sur sa carte de connexion.
connected-body-page = Votre compte { $provider } est connecté. Vos assistants peuvent l'utiliser dès maintenant ; vous pouvez fermer cette page.
connected-body-unsaid = Votre compte { $provider } est connecté. Revenez à votre assistant : s'il ne poursuit pas de lui-même, redemandez-lui.
connected-provider = Fournisseur
connected-account = Compte
connected-less-title = Connecté, avec moins d'accès que demandé
connected-less-body = { $provider } a accordé moins que ce qui était demandé : certaines actions (comme créer des factures) ne sont donc pas possibles. Rien n'a été écrit avec cet accès. Pour les autoriser, connectez-vous à nouveau et accordez tout ce que le fournisseur demande.
connected-unknown-provider = de facturation
connected-manage = Voir et gérer vos connexions

## La page des connexions

connections-title = Vos connexions
connections-intro = Connecté en tant que { $who }. Voici les comptes que vos assistants peuvent utiliser via { $brand }.
connections-none = Vous n'avez aucune connexion. Quand un assistant a besoin de l'un de vos comptes, il vous donne un lien pour le connecter.
connections-state = État
connections-access = Accès
connections-access-none = connexion uniquement
connections-since = Connecté depuis
connections-last-used = Dernière utilisation
connections-used-by = Dernière utilisation via
connections-client-declared = { $client } (nom que l'application s'est donné, non vérifié)
connections-client-blocked = { $client } (bloquée par l'opérateur : ses requêtes sont refusées, votre connexion reste)
connections-not-yet = pas encore
connections-ends = Prend fin définitivement
connections-reconnect = Reconnecter { $name }
connections-disconnect = Déconnecter { $name }
connections-connect-more = Connecter un compte
connections-connect-another = Connecter un autre compte { $provider }
connections-connect = Connecter { $provider }
connections-working = Fonctionne
connections-refresh-failing = Fonctionne, mais { $provider } n'a pas répondu au dernier renouvellement ; { $brand } réessaie
connections-needs-reauth = À reconnecter : { $why }
connections-broken-mark = À reconnecter
connections-no-longer-accepted = { $provider } n'accepte plus l'accès de { $brand }
connections-no-such-title = Connexion introuvable
connections-no-such-body = Vous n'avez aucune connexion avec cet identifiant ; elle a peut-être déjà été déconnectée.

## Dates et heures (en UTC)

date-time = { $day } { $month } { $year } à { $time } UTC
date-first-of-month = 1er
date-month-1 = janvier
date-month-2 = février
date-month-3 = mars
date-month-4 = avril
date-month-5 = mai
date-month-6 = juin
date-month-7 = juillet
date-month-8 = août
date-month-9 = septembre
date-month-10 = octobre
date-month-11 = novembre
date-month-12 = décembre

## Déconnexion

disconnect-title = Déconnecter { $name } ?
disconnect-explained = { $brand } oubliera cette connexion et demandera à { $provider } de révoquer son accès. Vos assistants n'atteindront plus ce compte. C'est irréversible : pour l'utiliser à nouveau, il faudrait le reconnecter.
disconnect-button = Déconnecter { $provider }
disconnect-cancel = Annuler
disconnect-busy = La connexion { $provider } est en cours de renouvellement, rien n'a donc été supprimé. Réessayez dans une minute.
disconnect-changed = La connexion { $provider } a changé après votre confirmation (elle a été reconnectée), rien n'a donc été supprimé. Redemandez pour déconnecter la nouvelle.
disconnect-updated = La connexion { $provider } était en cours de mise à jour ; rien n'a été supprimé. Réessayez.
disconnect-gone = Aucun compte { $provider } n'est plus connecté ; il n'y a rien d'autre à faire.
disconnect-confirmed = { $provider } déconnecté. { $provider } a confirmé que l'accès de { $brand } est révoqué.
disconnect-not-offered = { $provider } déconnecté : { $brand } a oublié la connexion. { $provider } n'offre aucun moyen à { $brand } de révoquer son accès ; retirez aussi l'application dans vos paramètres { $provider }.
disconnect-refused = { $provider } déconnecté : { $brand } a oublié la connexion, mais { $provider } a refusé de révoquer son accès (HTTP { $status }). L'accès prend fin à l'expiration de ses jetons ; vous pouvez aussi retirer l'application dans vos paramètres { $provider }.
disconnect-unreachable = { $provider } déconnecté : { $brand } a oublié la connexion, mais { $provider } n'a pas pu être joint pour révoquer son accès. L'accès prend fin à l'expiration de ses jetons ; vous pouvez aussi retirer l'application dans vos paramètres { $provider }.
disconnect-question = Déconnecter { $name } ? { $brand } oubliera cette connexion et demandera à { $provider } de révoquer son accès. C'est irréversible : pour l'utiliser à nouveau, il faudrait le reconnecter.
disconnect-question-title = Déconnecter { $provider }
disconnect-key-explained = { $brand } oubliera cette connexion et sa clé d'API. Vos assistants n'atteindront plus ce compte. La clé reste valable chez { $provider } jusqu'à ce que vous l'y supprimiez.
disconnect-key-question = Déconnecter { $name } ? { $brand } oubliera cette connexion et sa clé d'API ; la clé reste valable chez { $provider } jusqu'à ce que vous l'y supprimiez. C'est définitif : pour l'utiliser à nouveau, il faudrait la connecter de nouveau.
disconnect-key-forgotten = { $provider } déconnecté : { $brand } a oublié la clé d'API. Elle reste valable chez { $provider } jusqu'à ce que vous l'y supprimiez.

## Pages qui arrêtent une connexion

error-invalid-link-title = Ce lien de connexion n'est pas valide
error-invalid-link-body = Le lien a expiré ou est incomplet. Redemandez à votre assistant, il vous donnera un nouveau lien.
error-invalid-response-title = Cette réponse de connexion n'est pas valide
error-invalid-response-body = Rien n'a été connecté. Demandez un nouveau lien à votre assistant.
error-expired-title = Cette connexion a expiré
error-expired-body = Le retour depuis le fournisseur a pris trop de temps. Demandez un nouveau lien à votre assistant.
error-other-browser-title = Cette connexion a été commencée dans un autre navigateur
error-other-browser-body = Pour votre sécurité, elle a été arrêtée. Ouvrez le lien de votre assistant dans ce navigateur.
error-other-user-title = Cette connexion appartient à quelqu'un d'autre
error-other-user-body = Pour votre sécurité, elle a été arrêtée.
error-not-completed-title = Compte non connecté
error-not-completed-body = La connexion n'a pas été terminée, rien n'a donc été connecté. Vous pouvez fermer cette page.
error-not-connected-title = Le compte n'a pas pu être connecté
error-exchange-failed-body = Le fournisseur n'a pas terminé la connexion. Redemandez à votre assistant pour recommencer.
error-no-account-body = Le fournisseur n'a pas indiqué quel compte utiliser. Redemandez à votre assistant pour recommencer.
error-wrong-region-body = { $region }. Demandez à l'opérateur de l'ajouter.
error-misconfigured-title = Ce fournisseur est mal configuré
error-misconfigured-body = { $brand } ne peut pas vous envoyer vers ce fournisseur. L'opérateur a été prévenu dans le journal.
error-unopenable-title = Ce connecteur est mal configuré
error-unopenable-body = { $brand } ne peut pas ouvrir sur ce serveur ce qu'il a enregistré pour vous : ses serveurs ne partagent pas leurs clés. Rien n'a été modifié, et l'opérateur a été prévenu dans le journal.
error-unavailable-title = { $brand } est momentanément indisponible
error-unavailable-body = Rien n'a été modifié. Réessayez dans une minute.
error-link-of-another-title = Ce lien appartient à quelqu'un d'autre
error-link-of-another-body = Le lien de connexion a été émis pour un autre utilisateur. Demandez un lien à votre propre assistant.
error-bad-form-title = Ce formulaire ne peut pas être utilisé
error-bad-form-body = Le formulaire a expiré ou a été envoyé depuis un autre site. Rouvrez la page et réessayez.
error-login-misconfigured-title = La connexion est mal configurée
error-login-misconfigured-body = { $brand } ne peut pas vous envoyer vers votre page de connexion. L'opérateur a été prévenu dans le journal.
error-not-found-title = Introuvable
error-not-found-body = Il n'y a pas de connexion ici.
error-login-unfinished-title = Cette connexion ne peut pas être terminée
error-login-unfinished-body = Elle a expiré ou a été commencée dans un autre navigateur. Rouvrez le lien de votre assistant.
error-not-signed-in-title = Vous n'êtes pas connecté
error-not-signed-in-body = La connexion n'a pas été terminée. Rouvrez le lien de votre assistant pour réessayer.
error-already-connected-title = Déjà connecté
error-already-connected-body = Cette connexion est déjà terminée. Revenez à votre assistant.
error-superseded-title = Une connexion plus récente a remplacé celle-ci
error-superseded-body = Vous avez commencé plusieurs connexions ; seules les plus récentes peuvent aboutir. Utilisez le dernier lien de votre assistant.
error-still-finishing-title = Cette connexion est en train de se terminer
error-still-finishing-body = Patientez un instant, puis rechargez cette page.
error-already-used-title = Cette connexion a déjà été utilisée
error-already-used-body = Chaque connexion ne peut aboutir qu'une fois. Demandez un nouveau lien à votre assistant.
error-interrupted-title = Cette connexion n'a pas abouti
error-interrupted-body = La connexion du compte a été interrompue, rien n'a donc été connecté. Rouvrez le lien de votre assistant pour recommencer.
error-too-many-title = Trop de requêtes
error-too-many-body = Patientez une minute, puis rouvrez le lien de votre assistant.

## Messages qu'un client MCP montre à la personne

mcp-connect = Connectez votre compte { $provider } pour que { $brand } puisse l'utiliser.
mcp-grant-write = Autorisez { $brand } à créer et modifier des factures dans votre compte { $provider } : jusqu'ici il ne peut que les lire.
mcp-reconnect = Reconnectez votre compte { $provider } : { $why }.
mcp-choose-account = Plusieurs comptes { $provider } sont connectés. Lequel utiliser ?
mcp-choose-account-field = Compte { $provider }
mcp-choose-account-broken = { $account } (à reconnecter : il vous sera demandé de vous connecter à nouveau)
mcp-confirm-checkbox = Cochez pour continuer. C'est irréversible.
mcp-void-title = Annuler la facture { $number }
mcp-void-question = Annuler la facture { $invoice } ? L'annulation est irréversible : la facture reste enregistrée comme annulée et ne peut plus être payée.
mcp-invoice-needs = Pour créer la facture, { $brand } a besoin de :
invoice-field-email = E-mail du client
invoice-field-customer-name = Nom du client
invoice-field-amount = Montant
invoice-field-currency = Devise
invoice-field-due-date = Date d'échéance
invoice-field-description = Description
invoice-problem-email = Saisissez une adresse e-mail valide.
invoice-problem-customer-name = Saisissez le nom du client (200 caractères au plus).
invoice-problem-currency = Choisissez une devise dans la liste (un code ISO 4217 comme EUR).
invoice-problem-amount = Saisissez un montant supérieur à zéro avec au plus les décimales de la devise, par exemple 120.50.
invoice-problem-due-date = Saisissez une date d'échéance à partir d'aujourd'hui, au format AAAA-MM-JJ.
invoice-problem-description = Limitez la description à 500 caractères.
mcp-open-link = Ouvrez le lien, connectez-vous chez le fournisseur, puis revenez ici.

## Pourquoi une connexion doit être renouvelée

reauth-invalid-grant = { $provider } n'accepte plus l'accès de { $brand } (expiré ou révoqué)
reauth-no-refresh-token = l'accès accordé par { $provider } a expiré
reauth-token-refused = { $provider } refuse l'accès de { $brand }
reauth-access-withdrawn = { $provider } indique que l'accès de { $brand } a été retiré (consentement, organisation ou autorisation)

## La carte de connexion (une app MCP) : ce qu'une personne lit dans un hôte web qui l'affiche.

card-connect-prompt = Connectez votre compte { $provider } pour continuer.
card-connect-button = Connecter { $provider }
card-reconnect-prompt = Votre connexion { $provider } ({ $account }) doit être renouvelée.
card-reconnect-button = Reconnecter { $provider }
card-connected = { $provider } est connecté.
card-connect-another = Connecter un autre compte
card-needs-reauth = à reconnecter
card-use-account = Utiliser celui-ci
card-use-message = Utilise mon compte { $provider } « { $account } ».
card-waiting = Une page de connexion { $provider } s'ouvre. Terminez la connexion là-bas : cette carte le remarque quand c'est fait.
card-open-yourself = Si aucune page ne s'est ouverte, ouvrez ce lien dans votre navigateur :
card-expired = Le lien de connexion a expiré. Redemandez-en un nouveau.
card-done = Votre compte { $provider } { $account } est connecté.
card-continue = Continuer
card-continue-message = J'ai connecté mon compte { $provider } { $account }. Continue, s'il te plaît.
card-sent = Envoyé. Vous pouvez poursuivre la conversation.
card-failed = Cette carte n'a pas pu être affichée.
card-cancelled = Annulé.
card-unnamed = (compte sans nom)
