# Anteroom's visitor-facing strings: Dutch (nl). See en.ftl.

language-name = Nederlands
language-direction = ltr

language-label = Taal
waiting-room = Wachtruimte
title-queued = Je staat in de rij
lead-queued = Bedankt voor het wachten. We laten mensen strikt binnen in de volgorde waarin ze aankwamen, en deze pagina werkt zichzelf bij.
lead-queued-lanes = Bedankt voor het wachten. We laten mensen binnen in de volgorde waarin ze aankwamen, met een vast deel van de plaatsen voor voorrangsrijen, en deze pagina werkt zichzelf bij.
footer-lanes = Eerlijk: wie het eerst komt, het eerst maalt, binnen elke rij. Mogelijk gemaakt door Anteroom.
title-paused = De rij is gepauzeerd
lead-paused = De toegang is even gepauzeerd. Je houdt je plaats; de cijfers lopen weer zodra het verdergaat.
title-sold-out = Uitverkocht
lead-sold-out = Alles wat beschikbaar was, is voorlopig weg. Komt er meer bij, dan sluit deze pagina vanzelf voor je aan in de rij; houd haar open.
lead-sold-out-kept = Alles wat beschikbaar was, is voorlopig weg. Je houdt je plaats voor het geval er meer bijkomt, en deze pagina gaat vanzelf verder.
title-closed = Deze wachtruimte is gesloten
lead-closed = De organisator heeft deze wachtruimte voorlopig gesloten. Houd deze pagina open: ze sluit vanzelf voor je aan zodra de ruimte opengaat.
lead-closed-kept = De organisator heeft deze wachtruimte voorlopig gesloten. Je houdt je plaats in de rij, en deze pagina gaat vanzelf verder als ze weer opengaat.
title-rejected = Deze verkoop laat niemand binnen
lead-rejected = De organisator laat op dit moment niemand binnen of in de rij. Houd deze pagina open: ze sluit vanzelf voor je aan zodra de verkoop weer mensen toelaat.
lead-rejected-kept = De organisator laat op dit moment niemand binnen. Je houdt je plaats in de rij, en deze pagina gaat vanzelf verder als de verkoop weer mensen toelaat.
title-scheduled = De rij is nog niet open
lead-scheduled = Deze verkoop heeft een vaste begintijd. Houd deze pagina open: ze sluit vanzelf voor je aan zodra de rij opengaat.
title-prequeue = Je staat in de voorrij
lead-prequeue = Als de verkoop begint, wordt iedereen in de voorrij in een willekeurige volgorde gezet, dus herladen of als eerste komen is niet nodig. Houd deze pagina open: ze gaat bij de opening vanzelf de rij in.
title-event-ended = Deze verkoop is afgelopen
lead-event-ended = De verkoop waarvoor deze wachtruimte was, is voorbij en de rij is gesloten. Bedankt voor het wachten.
title-not-queued = Je staat niet meer in de rij
lead-not-queued = De organisator heeft de rij leeggemaakt (of je plaats verwijderd), dus je wacht niet meer. Je kunt achteraan opnieuw aansluiten.
title-no-show = Je hebt je beurt gemist
lead-no-show = Je werd binnengelaten, maar kwam niet op tijd op de site aan, dus je plaats ging naar de volgende in de rij. Je kunt achteraan opnieuw aansluiten.
title-admitted = Je bent aan de beurt
lead-admitted = We brengen je er nu heen…
continue-link = Doorgaan
rejoin = In de rij gaan staan
position-label = Je plaats in de rij
ahead-many =
    { $n ->
        [one] { $n } persoon voor je
       *[other] { $n } mensen voor je
    }
ahead-none = Jij bent de volgende!
ahead-none-paused = Er staat niemand voor je
in-line = { $n } in de rij
in-line-label = Mensen in de rij
announce-place = Je bent nu nummer { $n } in de rij.
eta-label = Geschatte wachttijd
eta-range = { $low } – { $high }
eta-minutes-range = { $low }–{ $high } min
eta-up-to = tot { $t }
eta-under-minute = minder dan een minuut
eta-minutes = { $n } min
eta-hours = { $n } u
eta-unknown = wordt berekend…
eta-went-up = De schatting is gestegen: de mensen voor je doen er langer over dan gewoonlijk.
eta-went-down = Goed nieuws: de rij gaat sneller dan verwacht.
eta-explain = Op basis van hoe lang mensen blijven nadat ze binnen zijn, en hoeveel plaatsen er vrijkomen.
you-were-away =
    { $n ->
        [one] Je was langer dan { $n } seconde weg, dus je bent je plaats kwijt en achteraan opnieuw aangesloten.
       *[other] Je was langer dan { $n } seconden weg, dus je bent je plaats kwijt en achteraan opnieuw aangesloten.
    }
eta-at-most = nog onbekend (hooguit { $t })
eta-at-most-minute = nog onbekend (minder dan een minuut)
eta-paused = in de wacht zolang de rij gepauzeerd is
reason-capacity-lowered = De organisator laat minder mensen tegelijk binnen, dus de wachttijd is langer.
reason-capacity-raised = De organisator laat meer mensen tegelijk binnen, dus de wachttijd is korter.
reason-paused = De rij is gepauzeerd, dus er loopt geen aftelling. Je houdt je plaats.
reason-resumed = De rij beweegt weer.
reason-rate-limited = Mensen worden in een vast tempo per minuut binnengelaten; de schatting volgt dat tempo.
reason-sessions-longer = Wie binnen is, blijft langer dan gewoonlijk, dus de rij gaat langzamer.
reason-sessions-shorter = Wie binnen is, vertrekt eerder dan gewoonlijk, dus de rij gaat sneller.
reason-places-restored = De wachtruimte heeft zich hersteld van een storing; je hebt je plaats gehouden.
reason-stock-may-run-out = Er zijn minder artikelen over dan mensen voor je: het kan uitverkocht raken voor je aan de beurt bent. Je houdt je plaats voor het geval er meer bijkomen.
reason-priority-lanes = Deze rij heeft voorrangsrijen: wie daarin staat, gaat er tegelijk naar binnen, dus je plaats kan iets terugschuiven als zij aankomen.
reason-origin-busy = De site staat onder druk, dus er gaan minder mensen tegelijk naar binnen tot ze hersteld is; de wachttijd is langer.
progress-label = Voortgang in de rij
keep-open =
    { $n ->
        [one] Houd dit tabblad open. Als je weggaat, houden we je plaats { $n } seconde vast.
       *[other] Houd dit tabblad open. Als je weggaat, houden we je plaats { $n } seconden vast.
    }
keep-open-hidden =
    { $m ->
        [one] Als je alleen van tabblad wisselt of je telefoon vergrendelt, houden we hem { $m } minuut vast.
       *[other] Als je alleen van tabblad wisselt of je telefoon vergrendelt, houden we hem { $m } minuten vast.
    }
live = Live
updated-at = bijgewerkt { $t }
support-code = Supportcode
connecting = Verbinden…
reconnecting = Opnieuw verbinden… je plaats wordt vastgehouden zolang de opmerking hieronder zegt.
polling = Live-updates worden hier geblokkeerd; we kijken in plaats daarvan om de paar seconden.
noscript = Deze pagina ververst zichzelf elke 20 seconden.
notify-button = Laat het me weten als ik aan de beurt ben
notify-on = We sturen een melding als je aan de beurt bent.
notify-denied = Meldingen zijn geblokkeerd in deze browser; houd het tabblad open.
notify-title = Je bent aan de beurt!
notify-body = Je plaats bij { $room } staat klaar.
tab-title-admitted = ✅ Je beurt — { $room }
footer = Eerlijk: wie het eerst komt, het eerst maalt. Mogelijk gemaakt door Anteroom.
err-unknown-room = Deze wachtruimte bestaat niet
err-unknown-room-lead = Controleer de link die je volgde; deze wachtruimte bestaat niet.
err-rate-limited = Te veel verzoeken
err-rate-limited-lead =
    { $n ->
        [one] Deze pagina is te vaak herladen. Je houdt je plaats; ze probeert het over { $n } seconde vanzelf opnieuw.
       *[other] Deze pagina is te vaak herladen. Je houdt je plaats; ze probeert het over { $n } seconden vanzelf opnieuw.
    }
retrying-in = Opnieuw proberen over { $n } s…
err-not-found = Hier is niets
err-not-found-lead = Dit adres is geen wachtruimte. Als een site je hierheen stuurde, controleer dan de link die je kreeg.
err-unavailable = We zijn zo terug
err-unavailable-lead = De wachtruimte heeft op dit moment problemen. Herlaad over een paar seconden; je houdt je plaats.
err-restoring = De rij wordt hersteld
err-restoring-lead = De opslag van de wachtruimte is opnieuw gestart, en de plaatsen die mensen al hadden, worden eerst teruggezet. Nieuwe plaatsen gaan zo weer open; deze pagina probeert het vanzelf opnieuw.
err-not-embeddable = Hier niet beschikbaar
gw-need-pass = Deze pagina zit achter een wachtruimte
gw-need-pass-lead = Sluit aan in de rij om verder te gaan; je wordt binnengelaten als je aan de beurt bent.
gw-join-queue = Aansluiten in de rij
gw-refused = De site antwoordt niet
gw-refused-lead = De site achter dit adres weigerde de verbinding. Probeer het zo opnieuw.
gw-timeout = De site deed er te lang over om te antwoorden
gw-timeout-lead = De site achter dit adres antwoordde niet op tijd. Probeer het zo opnieuw.
gw-bad-request = Dit adres kan niet worden gelezen
gw-bad-request-lead = Het adres heeft een vorm die sites verschillend lezen (een gecodeerde '/', een '\', een '.'- of '..'-deel). Gebruik de eigen links van de site.
err-not-embeddable-lead = Deze wachtruimte mag niet op deze site worden ingesloten.
pow-title = Je browser wordt gecontroleerd
pow-lead = Dit duurt een paar seconden en houdt bots weg bij de plaatsen. Je sluit aan in de rij zodra het klaar is (JavaScript is nodig).
pow-progress = Je browser wordt gecontroleerd… { $n } %
pow-failed = Je browser kon de controle niet afronden. Herlaad de pagina om het opnieuw te proberen.
err-places = Je netwerk heeft zijn plaatsen in deze rij al
err-places-lead = Iemand op hetzelfde netwerk (een kantoor, een school, een mobiel netwerk) heeft al zoveel plaatsen als deze rij per netwerk toestaat. Probeer het opnieuw zodra een van hen is binnengelaten.
err-entry = Voor deze rij is een uitnodiging van de site nodig
err-entry-lead = Open de wachtruimte via de eigen link van de site (log daar eerst in). De link die je volgde heeft geen uitnodiging, of die is verlopen of hoort bij een andere rij.
try-again = Opnieuw proberen

drop-lead-scheduled = De rij gaat open om { $time }. Houd deze pagina open: ze sluit vanzelf voor je aan; herladen is niet nodig.
drop-lead-prequeue = Om { $time } krijgt iedereen hier een willekeurige plaats; eerder aansluiten helpt niet. Houd deze pagina open: ze gaat vanzelf de rij in.
drop-lead-queued-drop = Bedankt voor het wachten. De plaatsen zijn onder iedereen in de voorrij verloot, en wie later kwam, staat daarachter in volgorde van aankomst. Deze pagina werkt zichzelf bij.
drop-footer-drop = Eerlijk: een loting die iedereen kan controleren, daarna wie het eerst komt. Mogelijk gemaakt door Anteroom.
drop-countdown-label = Gaat open over
drop-countdown-now = Gaat nu open…
drop-unit-hours = u
drop-unit-minutes = min
drop-unit-seconds = s
drop-fair-summary = Hoe is mijn plaats bepaald?
drop-fair-explain = Toen de voorrij openging, publiceerde deze verkoop een toezegging: de SHA-256 van een geheim willekeurig zaad. Bij de opening werd het zaad onthuld, en iedereen in de voorrij werd gerangschikt op HMAC-SHA256(zaad, hun bezoekers-id). Deze pagina controleert je eigen plaats hier, in je browser.
drop-fair-checking = Controleren…
drop-fair-result = Jouw loting: { $draw }…; plaats { $rank } van { $n }; toezegging klopt: { $ok }
drop-fair-yes = ja
drop-fair-no = nee
drop-fair-not-in = Jouw loting { $draw }… hoort niet bij die van de voorrij: je sloot aan na de opening, dus je plaats volgt de aankomst.
drop-fair-mismatch = Het onthulde zaad komt niet overeen met de toezegging die voor de opening is gepubliceerd.
drop-fair-unavailable = Deze browser kan de controle niet uitvoeren (daarvoor is Web Crypto op een beveiligde pagina nodig). Het verslag staat op { $url }.
drop-fair-failed = De controle kon niet worden afgerond: het eerlijkheidsverslag kon niet worden gelezen. Over een paar seconden opnieuw.

told-title-queued-random = Je doet mee aan de loting
told-lead-queued-random = Elke keer dat er een plaats vrijkomt, wordt er willekeurig één persoon gekozen uit iedereen die wacht. Eerder komen of herladen maakt niets uit. Deze pagina werkt zichzelf bij.
told-footer-random = Eerlijk: een willekeurige loting onder iedereen die wacht. Mogelijk gemaakt door Anteroom.
told-chances-label = Je kansen
told-chances =
    { $n ->
        [one] De { $n } persoon die nu wacht, gaat binnen ongeveer { $median } naar binnen; 1 op 20 binnen { $low }, 19 op 20 binnen { $high }.
       *[other] Ongeveer de helft van de { $n } mensen die nu wachten, gaat binnen { $median } naar binnen; 1 op 20 binnen { $low }, 19 op 20 binnen { $high }.
    }
told-chances-unknown = Nog onbekend: iedereen die nu wacht, gaat binnen hooguit { $t } naar binnen.
told-chances-paused = In de wacht zolang de loting gepauzeerd is.
told-note-random-draw = In deze rij zijn er geen plaatsen: iedereen die wacht, heeft bij elke trekking dezelfde kans, wanneer ze ook aankwamen. De kansen zijn voor iedereen gelijk en veranderen als mensen aansluiten en vertrekken.
told-note-any-time-before = Op elk moment vóór { $open } aankomen is even goed: de voorrij gaat open om { $time }, en om { $open } wordt iedereen erin in een willekeurige volgorde gezet. Je hoeft er niet te zijn op de seconde dat ze opengaat.
told-fair-rank-explain = De rangorde is jouw loting onder iedereen in de voorrij bij de opening; je plaats telt alleen de mensen die nog voor je wachten, dus die is lager zodra sommigen van hen binnen zijn.
told-not-live = Niet live: geen update sinds { $t }. Opnieuw proberen…
told-dismiss = Begrepen
told-err-unavailable-newcomer = De wachtruimte heeft op dit moment problemen, dus je kon nog niet aansluiten in de rij. Deze pagina probeert het vanzelf opnieuw.
told-err-unavailable-kept = De wachtruimte heeft op dit moment problemen. Als je al een plaats in de rij had, houd je die. Deze pagina probeert het vanzelf opnieuw.
told-err-places-retry = Iemand op hetzelfde netwerk (een kantoor, een school, een mobiel netwerk) heeft al zoveel plaatsen als deze rij per netwerk toestaat. Er komt een plaats vrij als een van hen binnen is; deze pagina probeert het vanzelf opnieuw.
told-pow-noscript = Deze wachtruimte controleert je browser met een korte berekening voordat je aansluit in de rij, en daarvoor is JavaScript nodig. Zet JavaScript aan voor deze site en herlaad daarna deze pagina.
told-embed-refused-title = Deze wachtruimte kan hier niet worden getoond
told-embed-refused = De wachtruimte ‘{ $room }’ mag niet worden ingesloten op { $origin }. Is dit jouw site, voeg { $origin } dan toe aan de embed_origins van de ruimte.
