# Anteroom's visitor-facing strings: French (fr). See en.ftl.

language-name = Français
language-direction = ltr

language-label = Langue
waiting-room = Salle d'attente
title-queued = Vous êtes dans la file
lead-queued = Merci de patienter. Nous faisons entrer les gens strictement dans leur ordre d'arrivée, et cette page se met à jour toute seule.
lead-queued-lanes = Merci de patienter. Nous faisons entrer les gens dans leur ordre d'arrivée, avec une part fixe de places pour les files prioritaires, et cette page se met à jour toute seule.
footer-lanes = Équitable : premier arrivé, premier servi dans chaque file. Propulsé par Anteroom.
title-paused = La file est en pause
lead-paused = Les entrées sont suspendues un instant. Vous gardez votre place ; les chiffres repartent dès la reprise.
title-sold-out = Épuisé
lead-sold-out = Tout ce qui était disponible a été pris pour le moment. S'il y en a davantage, cette page vous inscrit dans la file toute seule ; gardez-la ouverte.
lead-sold-out-kept = Tout ce qui était disponible a été pris pour le moment. Vous gardez votre place au cas où il y en aurait davantage, et cette page avance toute seule.
title-closed = Cette salle d'attente est fermée
lead-closed = L'organisateur a fermé cette salle d'attente pour le moment. Gardez cette page ouverte : elle vous inscrit dans la file toute seule dès l'ouverture.
lead-closed-kept = L'organisateur a fermé cette salle d'attente pour le moment. Vous gardez votre place dans la file, et cette page avance toute seule à la réouverture.
title-rejected = Cette vente ne fait entrer personne
lead-rejected = L'organisateur ne laisse personne entrer ni rejoindre la file pour le moment. Gardez cette page ouverte : elle vous inscrit dans la file toute seule dès que la vente admet de nouveau.
lead-rejected-kept = L'organisateur ne laisse personne entrer pour le moment. Vous gardez votre place dans la file, et cette page avance toute seule quand la vente admet de nouveau.
title-scheduled = La file n'est pas encore ouverte
lead-scheduled = Cette vente a une heure de début fixée. Gardez cette page ouverte : elle vous inscrit dans la file toute seule dès son ouverture.
title-prequeue = Vous êtes dans la pré-file
lead-prequeue = À l'ouverture de la vente, tout le monde dans la pré-file est placé dans un ordre aléatoire : inutile de recharger ou d'être arrivé le premier. Gardez cette page ouverte : elle passe dans la file toute seule à l'ouverture.
title-event-ended = Cette vente est terminée
lead-event-ended = La vente de cette salle d'attente est terminée et la file est fermée. Merci d'avoir patienté.
title-not-queued = Vous n'êtes plus dans la file
lead-not-queued = L'organisateur a vidé la file (ou retiré votre place) : vous n'êtes plus en attente. Vous pouvez rejoindre la file de nouveau, à la fin.
title-no-show = Vous avez manqué votre tour
lead-no-show = Vous avez été admis, mais n'êtes pas arrivé sur le site dans le délai imparti : votre place est passée à la personne suivante. Vous pouvez rejoindre la file de nouveau, à la fin.
title-admitted = C'est votre tour
lead-admitted = Nous vous y emmenons…
continue-link = Continuer
rejoin = Rejoindre la file
position-label = Votre place dans la file
ahead-many =
    { $n ->
        [one] { $n } personne devant vous
       *[other] { $n } personnes devant vous
    }
ahead-none = Vous êtes le prochain !
ahead-none-paused = Personne n'est devant vous
in-line = { $n } dans la file
in-line-label = Personnes dans la file
announce-place = Vous êtes maintenant numéro { $n } dans la file.
eta-label = Attente estimée
eta-range = { $low } – { $high }
eta-minutes-range = { $low }–{ $high } min
eta-up-to = jusqu'à { $t }
eta-under-minute = moins d'une minute
eta-minutes = { $n } min
eta-hours = { $n } h
eta-unknown = calcul en cours…
eta-went-up = L'estimation a augmenté : les personnes devant vous mettent plus de temps que d'habitude.
eta-went-down = Bonne nouvelle : la file avance plus vite que prévu.
eta-explain = D'après le temps que les gens restent une fois entrés et le nombre de places qui se libèrent.
you-were-away =
    { $n ->
        [one] Vous vous êtes absenté plus de { $n } seconde : vous avez perdu votre place et rejoint la file de nouveau, à la fin.
       *[other] Vous vous êtes absenté plus de { $n } secondes : vous avez perdu votre place et rejoint la file de nouveau, à la fin.
    }
eta-at-most = pas encore connue (au plus { $t })
eta-at-most-minute = pas encore connue (moins d'une minute)
eta-paused = suspendue tant que la file est en pause
reason-capacity-lowered = L'organisateur fait entrer moins de personnes à la fois : l'attente est plus longue.
reason-capacity-raised = L'organisateur fait entrer plus de personnes à la fois : l'attente est plus courte.
reason-paused = La file est en pause, il n'y a donc pas de compte à rebours. Vous gardez votre place.
reason-resumed = La file avance de nouveau.
reason-rate-limited = Les gens entrent à un rythme fixe par minute ; l'estimation suit ce rythme.
reason-sessions-longer = Les personnes entrées restent plus longtemps que d'habitude : la file avance plus lentement.
reason-sessions-shorter = Les personnes entrées repartent plus tôt que d'habitude : la file avance plus vite.
reason-places-restored = La salle d'attente s'est remise d'une panne ; vous avez gardé votre place.
reason-stock-may-run-out = Il reste moins d'articles que de personnes devant vous : le stock peut s'épuiser avant votre tour. Vous gardez votre place au cas où d'autres seraient ajoutés.
reason-priority-lanes = Cette file a des files prioritaires : leurs personnes entrent en parallèle, donc votre place peut reculer un peu quand elles arrivent.
reason-origin-busy = Le site est surchargé : moins de personnes entrent à la fois jusqu'à ce qu'il se rétablisse ; l'attente est plus longue.
progress-label = Progression dans la file
keep-open =
    { $n ->
        [one] Gardez cet onglet ouvert. Si vous partez, nous gardons votre place { $n } seconde.
       *[other] Gardez cet onglet ouvert. Si vous partez, nous gardons votre place { $n } secondes.
    }
keep-open-hidden =
    { $m ->
        [one] Si vous changez simplement d'onglet ou verrouillez votre téléphone, nous la gardons { $m } minute.
       *[other] Si vous changez simplement d'onglet ou verrouillez votre téléphone, nous la gardons { $m } minutes.
    }
live = En direct
updated-at = mis à jour { $t }
support-code = Code d'assistance
connecting = Connexion…
reconnecting = Reconnexion… votre place est gardée aussi longtemps que l'indique la note ci-dessous.
polling = Les mises à jour en direct sont bloquées ici ; vérification toutes les quelques secondes à la place.
noscript = Cette page se recharge toute seule toutes les 20 secondes.
notify-button = Me prévenir quand c'est mon tour
notify-on = Nous vous enverrons une notification quand ce sera votre tour.
notify-denied = Les notifications sont bloquées dans ce navigateur ; gardez l'onglet ouvert.
notify-title = C'est votre tour !
notify-body = Votre place chez { $room } est prête.
tab-title-admitted = ✅ Votre tour — { $room }
footer = Équitable : premier arrivé, premier servi. Propulsé par Anteroom.
err-unknown-room = Cette salle d'attente n'existe pas
err-unknown-room-lead = Vérifiez le lien que vous avez suivi ; cette salle d'attente n'existe pas.
err-rate-limited = Trop de requêtes
err-rate-limited-lead =
    { $n ->
        [one] Cette page a été rechargée trop souvent. Vous gardez votre place ; elle réessaie toute seule dans { $n } seconde.
       *[other] Cette page a été rechargée trop souvent. Vous gardez votre place ; elle réessaie toute seule dans { $n } secondes.
    }
retrying-in = Nouvel essai dans { $n } s…
err-not-found = Rien ici
err-not-found-lead = Cette adresse n'est pas une salle d'attente. Si un site vous a envoyé ici, vérifiez le lien qu'il vous a donné.
err-unavailable = Nous revenons tout de suite
err-unavailable-lead = La salle d'attente rencontre un problème. Rechargez dans quelques secondes ; vous gardez votre place.
err-restoring = La file est en cours de restauration
err-restoring-lead = Le stockage de la salle d'attente a redémarré, et les places déjà occupées sont rétablies en premier. Les nouvelles places rouvrent dans un instant ; cette page réessaie toute seule.
err-not-embeddable = Indisponible ici
gw-need-pass = Cette page est derrière une salle d'attente
gw-need-pass-lead = Rejoignez la file pour continuer ; vous entrerez quand ce sera votre tour.
gw-join-queue = Rejoindre la file
gw-refused = Le site ne répond pas
gw-refused-lead = Le site derrière cette adresse a refusé la connexion. Réessayez dans un instant.
gw-timeout = Le site a mis trop de temps à répondre
gw-timeout-lead = Le site derrière cette adresse n'a pas répondu à temps. Réessayez dans un instant.
gw-bad-request = Cette adresse ne peut pas être lue
gw-bad-request-lead = L'adresse a une forme que les sites lisent de manières différentes (un « / » encodé, un « \ », une partie « . » ou « .. »). Utilisez les liens du site lui-même.
err-not-embeddable-lead = Cette salle d'attente ne peut pas être intégrée sur ce site.
pow-title = Vérification de votre navigateur
pow-lead = Cela prend quelques secondes et empêche les robots de prendre des places. Vous rejoignez la file dès que c'est fini (JavaScript est nécessaire).
pow-progress = Vérification de votre navigateur… { $n } %
pow-failed = Votre navigateur n'a pas pu terminer la vérification. Rechargez la page pour réessayer.
err-places = Votre réseau a déjà ses places dans cette file
err-places-lead = Quelqu'un sur le même réseau (un bureau, une école, un réseau mobile) occupe déjà autant de places que cette file en permet par réseau. Réessayez quand l'une de ces personnes sera entrée.
err-entry = Cette file nécessite une invitation du site
err-entry-lead = Ouvrez la salle d'attente depuis le lien du site lui-même (connectez-vous-y d'abord). Le lien que vous avez suivi n'a pas d'invitation, ou elle a expiré, ou elle est pour une autre file.
try-again = Réessayer

drop-lead-scheduled = La file ouvre à { $time }. Gardez cette page ouverte : elle vous inscrit dans la file toute seule ; inutile de recharger.
drop-lead-prequeue = À { $time }, chacun ici reçoit une place tirée au sort ; arriver plus tôt n'aide pas. Gardez cette page ouverte : elle passe dans la file toute seule.
drop-lead-queued-drop = Merci de patienter. Les places ont été tirées au sort pour tout le monde dans la pré-file, et ceux arrivés ensuite se placent derrière dans leur ordre d'arrivée. Cette page se met à jour toute seule.
drop-footer-drop = Équitable : un tirage que chacun peut vérifier, puis premier arrivé, premier servi. Propulsé par Anteroom.
drop-countdown-label = Ouverture dans
drop-countdown-now = Ouverture…
drop-unit-hours = h
drop-unit-minutes = min
drop-unit-seconds = s
drop-fair-summary = Comment ma place a-t-elle été décidée ?
drop-fair-explain = À l'ouverture de la pré-file, cette vente a publié un engagement : le SHA-256 d'une graine aléatoire secrète. À l'ouverture, elle a révélé la graine, et tout le monde dans la pré-file a été classé par HMAC-SHA256(graine, identifiant du visiteur). Cette page vérifie votre propre place ici, dans votre navigateur.
drop-fair-checking = Vérification…
drop-fair-result = Votre tirage : { $draw }… ; rang { $rank } sur { $n } ; l'engagement correspond : { $ok }
drop-fair-yes = oui
drop-fair-no = non
drop-fair-not-in = Votre tirage { $draw }… ne fait pas partie de ceux de la pré-file : vous êtes arrivé après l'ouverture, votre place suit donc l'ordre d'arrivée.
drop-fair-mismatch = La graine révélée ne correspond pas à l'engagement publié avant l'ouverture.
drop-fair-unavailable = Ce navigateur ne peut pas faire la vérification (il faut Web Crypto sur une page sécurisée). L'enregistrement se trouve à { $url }.
drop-fair-failed = La vérification n'a pas pu aboutir : l'enregistrement d'équité n'a pas pu être lu. Nouvel essai dans quelques secondes.

told-title-queued-random = Vous participez au tirage
told-lead-queued-random = Chaque fois qu'une place se libère, une personne est tirée au sort parmi toutes celles qui attendent. Arriver plus tôt ou recharger ne change rien. Cette page se met à jour toute seule.
told-footer-random = Équitable : un tirage au sort parmi toutes les personnes qui attendent. Propulsé par Anteroom.
told-chances-label = Vos chances
told-chances =
    { $n ->
        [one] La { $n } personne qui attend entre d'ici environ { $median } ; 1 sur 20 d'ici { $low }, 19 sur 20 d'ici { $high }.
       *[other] Environ la moitié des { $n } personnes qui attendent entrent d'ici { $median } ; 1 sur 20 d'ici { $low }, 19 sur 20 d'ici { $high }.
    }
told-chances-unknown = Pas encore connu : toutes les personnes qui attendent entrent d'ici { $t } au plus.
told-chances-paused = Suspendu tant que le tirage est en pause.
told-note-random-draw = Il n'y a pas de place dans cette file : chaque personne qui attend a la même chance à chaque tirage, quelle que soit son heure d'arrivée. Les chances sont les mêmes pour tous et changent au gré des arrivées et des départs.
told-note-any-time-before = Arriver à n'importe quel moment avant { $open } revient au même : la pré-file ouvre à { $time }, et à { $open } tout le monde y est placé dans un ordre aléatoire. Inutile d'être là à la seconde de l'ouverture.
told-fair-rank-explain = Le rang est votre tirage parmi tous ceux de la pré-file à l'ouverture ; votre place ne compte que les personnes qui attendent encore devant vous, elle est donc plus basse une fois que certaines sont entrées.
told-not-live = Pas en direct : aucune mise à jour depuis { $t }. Nouvel essai…
told-dismiss = Compris
told-err-unavailable-newcomer = La salle d'attente rencontre un problème : vous n'avez pas encore pu rejoindre la file. Cette page réessaie toute seule.
told-err-unavailable-kept = La salle d'attente rencontre un problème. Si vous aviez déjà une place dans la file, vous la gardez. Cette page réessaie toute seule.
told-err-places-retry = Quelqu'un sur le même réseau (un bureau, une école, un réseau mobile) occupe déjà autant de places que cette file en permet par réseau. Une place se libère quand l'une de ces personnes entre ; cette page réessaie toute seule.
told-pow-noscript = Cette salle d'attente vérifie votre navigateur par un court calcul avant que vous rejoigniez la file, ce qui nécessite JavaScript. Activez JavaScript pour ce site, puis rechargez cette page.
told-embed-refused-title = Cette salle d'attente ne peut pas s'afficher ici
told-embed-refused = La salle d'attente « { $room } » n'autorise pas son intégration sur { $origin }. Si c'est votre site, ajoutez { $origin } aux embed_origins de la salle.
