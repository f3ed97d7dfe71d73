# Anteroom's visitor-facing strings: Polish (pl). See en.ftl.

language-name = Polski
language-direction = ltr

language-label = Język
waiting-room = Poczekalnia
title-queued = Jesteś w kolejce
lead-queued = Dziękujemy za cierpliwość. Wpuszczamy osoby ściśle w kolejności przybycia, a ta strona odświeża się sama.
lead-queued-lanes = Dziękujemy za cierpliwość. Wpuszczamy osoby w kolejności przybycia, ze stałą pulą miejsc dla kolejek priorytetowych, a ta strona odświeża się sama.
footer-lanes = Uczciwie: kto pierwszy, ten lepszy w każdej kolejce. Działa dzięki Anteroom.
title-paused = Kolejka jest wstrzymana
lead-paused = Wpuszczanie jest na chwilę wstrzymane. Zachowujesz swoje miejsce; liczby ruszą, gdy tylko zostanie wznowione.
title-sold-out = Wyprzedane
lead-sold-out = Na razie wszystko, co było dostępne, zostało wykupione. Jeśli pojawi się więcej, ta strona sama ustawi cię w kolejce; nie zamykaj jej.
lead-sold-out-kept = Na razie wszystko, co było dostępne, zostało wykupione. Zachowujesz miejsce na wypadek, gdyby pojawiło się więcej, a ta strona sama przejdzie dalej.
title-closed = Ta poczekalnia jest zamknięta
lead-closed = Organizator na razie zamknął tę poczekalnię. Nie zamykaj tej strony: sama ustawi cię w kolejce, gdy tylko poczekalnia zostanie otwarta.
lead-closed-kept = Organizator na razie zamknął tę poczekalnię. Zachowujesz miejsce w kolejce, a ta strona sama przejdzie dalej po ponownym otwarciu.
title-rejected = Ta sprzedaż nikogo nie wpuszcza
lead-rejected = Organizator nie wpuszcza teraz nikogo ani do środka, ani do kolejki. Nie zamykaj tej strony: sama ustawi cię w kolejce, gdy tylko sprzedaż znów zacznie wpuszczać.
lead-rejected-kept = Organizator nie wpuszcza teraz nikogo. Zachowujesz miejsce w kolejce, a ta strona sama przejdzie dalej, gdy sprzedaż znów zacznie wpuszczać.
title-scheduled = Kolejka jeszcze się nie otworzyła
lead-scheduled = Ta sprzedaż ma ustaloną godzinę rozpoczęcia. Nie zamykaj tej strony: sama ustawi cię w kolejce, gdy tylko kolejka się otworzy.
title-prequeue = Jesteś w przedkolejce
lead-prequeue = Gdy sprzedaż się rozpocznie, wszyscy w przedkolejce zostaną ustawieni w losowej kolejności, więc nie trzeba odświeżać ani przychodzić pierwszym. Nie zamykaj tej strony: w chwili otwarcia sama przejdzie do kolejki.
title-event-ended = Ta sprzedaż się zakończyła
lead-event-ended = Sprzedaż, dla której była ta poczekalnia, dobiegła końca, a kolejka jest zamknięta. Dziękujemy za cierpliwość.
title-not-queued = Nie jesteś już w kolejce
lead-not-queued = Organizator opróżnił kolejkę (lub usunął twoje miejsce), więc już nie czekasz. Możesz ponownie stanąć na końcu kolejki.
title-no-show = Twoja kolej minęła
lead-no-show = Zostałeś wpuszczony, ale nie dotarłeś do strony w wyznaczonym czasie, więc twoje miejsce przeszło na następną osobę w kolejce. Możesz ponownie stanąć na końcu kolejki.
title-admitted = Twoja kolej
lead-admitted = Przenosimy cię…
continue-link = Dalej
rejoin = Stań w kolejce
position-label = Twoje miejsce w kolejce
ahead-many =
    { $n ->
        [one] { $n } osoba przed tobą
        [few] { $n } osoby przed tobą
        [many] { $n } osób przed tobą
       *[other] { $n } osoby przed tobą
    }
ahead-none = Jesteś następny!
ahead-none-paused = Nikt nie stoi przed tobą
in-line =
    { $n ->
        [one] { $n } osoba w kolejce
        [few] { $n } osoby w kolejce
        [many] { $n } osób w kolejce
       *[other] { $n } osoby w kolejce
    }
in-line-label = Osoby w kolejce
announce-place = Jesteś teraz numerem { $n } w kolejce.
eta-label = Szacowany czas oczekiwania
eta-range = { $low } – { $high }
eta-minutes-range = { $low }–{ $high } min
eta-up-to = do { $t }
eta-under-minute = niecała minuta
eta-minutes = { $n } min
eta-hours = { $n } godz.
eta-unknown = obliczanie…
eta-went-up = Szacunek wzrósł: osoby przed tobą potrzebują więcej czasu niż zwykle.
eta-went-down = Dobra wiadomość: kolejka porusza się szybciej, niż zakładano.
eta-explain = Na podstawie tego, jak długo osoby zostają po wejściu, i tego, ile miejsc się zwalnia.
you-were-away =
    { $n ->
        [one] Nie było cię dłużej niż { $n } sekundę, więc straciłeś miejsce i ponownie stanąłeś na końcu kolejki.
        [few] Nie było cię dłużej niż { $n } sekundy, więc straciłeś miejsce i ponownie stanąłeś na końcu kolejki.
       *[other] Nie było cię dłużej niż { $n } sekund, więc straciłeś miejsce i ponownie stanąłeś na końcu kolejki.
    }
eta-at-most = jeszcze nieznany (najwyżej { $t })
eta-at-most-minute = jeszcze nieznany (niecała minuta)
eta-paused = wstrzymany, dopóki kolejka stoi
reason-capacity-lowered = Organizator wpuszcza naraz mniej osób, więc czekanie się wydłuża.
reason-capacity-raised = Organizator wpuszcza naraz więcej osób, więc czekanie się skraca.
reason-paused = Kolejka jest wstrzymana, więc nie ma odliczania. Zachowujesz swoje miejsce.
reason-resumed = Kolejka znów się porusza.
reason-rate-limited = Osoby są wpuszczane w stałym tempie na minutę; szacunek podąża za tym tempem.
reason-sessions-longer = Wpuszczone osoby zostają dłużej niż zwykle, więc kolejka porusza się wolniej.
reason-sessions-shorter = Wpuszczone osoby wychodzą wcześniej niż zwykle, więc kolejka porusza się szybciej.
reason-places-restored = Poczekalnia wróciła do działania po awarii; zachowałeś swoje miejsce.
reason-stock-may-run-out = Zostało mniej sztuk niż osób przed tobą: może się wyprzedać przed twoją kolejką. Zachowujesz miejsce na wypadek, gdyby dodano więcej.
reason-priority-lanes = Ta kolejka ma kolejki priorytetowe: osoby z nich wchodzą równolegle, więc twoje miejsce może się nieco cofnąć, gdy się pojawiają.
reason-origin-busy = Strona jest przeciążona, więc do czasu poprawy wpuszczamy naraz mniej osób; czekanie się wydłuża.
progress-label = Postęp w kolejce
keep-open =
    { $n ->
        [one] Nie zamykaj tej karty. Jeśli wyjdziesz, zachowamy twoje miejsce przez { $n } sekundę.
        [few] Nie zamykaj tej karty. Jeśli wyjdziesz, zachowamy twoje miejsce przez { $n } sekundy.
       *[other] Nie zamykaj tej karty. Jeśli wyjdziesz, zachowamy twoje miejsce przez { $n } sekund.
    }
keep-open-hidden =
    { $m ->
        [one] Jeśli tylko przełączysz kartę lub zablokujesz telefon, zachowamy je przez { $m } minutę.
        [few] Jeśli tylko przełączysz kartę lub zablokujesz telefon, zachowamy je przez { $m } minuty.
       *[other] Jeśli tylko przełączysz kartę lub zablokujesz telefon, zachowamy je przez { $m } minut.
    }
live = Na żywo
updated-at = zaktualizowano { $t }
support-code = Kod wsparcia
connecting = Łączenie…
reconnecting = Ponowne łączenie… twoje miejsce jest zachowane tak długo, jak mówi uwaga poniżej.
polling = Aktualizacje na żywo są tu zablokowane; zamiast tego sprawdzamy co kilka sekund.
noscript = Ta strona odświeża się sama co 20 sekund.
notify-button = Powiadom mnie, gdy przyjdzie moja kolej
notify-on = Wyślemy powiadomienie, gdy przyjdzie twoja kolej.
notify-denied = Powiadomienia są zablokowane w tej przeglądarce; nie zamykaj karty.
notify-title = Twoja kolej!
notify-body = Twoje miejsce w { $room } jest gotowe.
tab-title-admitted = ✅ Twoja kolej — { $room }
footer = Uczciwie: kto pierwszy, ten lepszy. Działa dzięki Anteroom.
err-unknown-room = Nie ma takiej poczekalni
err-unknown-room-lead = Sprawdź link, z którego korzystasz; ta poczekalnia nie istnieje.
err-rate-limited = Zbyt wiele żądań
err-rate-limited-lead =
    { $n ->
        [one] Ta strona była odświeżana zbyt często. Zachowujesz miejsce; strona sama spróbuje ponownie za { $n } sekundę.
        [few] Ta strona była odświeżana zbyt często. Zachowujesz miejsce; strona sama spróbuje ponownie za { $n } sekundy.
       *[other] Ta strona była odświeżana zbyt często. Zachowujesz miejsce; strona sama spróbuje ponownie za { $n } sekund.
    }
retrying-in = Ponowna próba za { $n } s…
err-not-found = Nic tu nie ma
err-not-found-lead = Ten adres nie jest poczekalnią. Jeśli przysłała cię tu jakaś strona, sprawdź podany przez nią link.
err-unavailable = Zaraz wracamy
err-unavailable-lead = Poczekalnia ma teraz problemy. Odśwież za kilka sekund; zachowujesz swoje miejsce.
err-restoring = Kolejka jest przywracana
err-restoring-lead = Magazyn poczekalni został uruchomiony ponownie, a miejsca, które ludzie już mieli, są przywracane w pierwszej kolejności. Nowe miejsca otworzą się za chwilę; ta strona sama spróbuje ponownie.
err-not-embeddable = Niedostępne tutaj
gw-need-pass = Ta strona znajduje się za poczekalnią
gw-need-pass-lead = Stań w kolejce, aby kontynuować; zostaniesz wpuszczony, gdy przyjdzie twoja kolej.
gw-join-queue = Stań w kolejce
gw-refused = Strona nie odpowiada
gw-refused-lead = Strona pod tym adresem odrzuciła połączenie. Spróbuj ponownie za chwilę.
gw-timeout = Strona zbyt długo nie odpowiadała
gw-timeout-lead = Strona pod tym adresem nie odpowiedziała na czas. Spróbuj ponownie za chwilę.
gw-bad-request = Nie można odczytać tego adresu
gw-bad-request-lead = Adres ma postać, którą strony odczytują na różne sposoby (zakodowany '/', '\', część '.' lub '..'). Użyj linków samej strony.
err-not-embeddable-lead = Tej poczekalni nie można osadzić na tej stronie.
pow-title = Sprawdzamy twoją przeglądarkę
pow-lead = To potrwa kilka sekund i chroni miejsca przed botami. Staniesz w kolejce, gdy tylko się skończy (potrzebny JavaScript).
pow-progress = Sprawdzamy twoją przeglądarkę… { $n }%
pow-failed = Twoja przeglądarka nie mogła dokończyć sprawdzania. Odśwież stronę, aby spróbować ponownie.
err-places = Twoja sieć ma już swoje miejsca w tej kolejce
err-places-lead = Ktoś w tej samej sieci (w biurze, w szkole, w sieci komórkowej) ma już tyle miejsc, ile ta kolejka pozwala na jedną sieć. Spróbuj ponownie, gdy jedna z tych osób zostanie wpuszczona.
err-entry = Ta kolejka wymaga zaproszenia od strony
err-entry-lead = Otwórz poczekalnię z linku samej strony (najpierw się tam zaloguj). Link, z którego korzystasz, nie zawiera zaproszenia albo wygasło ono lub dotyczy innej kolejki.
try-again = Spróbuj ponownie

drop-lead-scheduled = Kolejka otwiera się o { $time }. Nie zamykaj tej strony: sama ustawi cię w kolejce; nie trzeba odświeżać.
drop-lead-prequeue = O { $time } każdy tutaj dostanie losowe miejsce; wcześniejsze dołączenie nie pomaga. Nie zamykaj tej strony: sama przejdzie do kolejki.
drop-lead-queued-drop = Dziękujemy za cierpliwość. Miejsca zostały wylosowane dla wszystkich w przedkolejce, a ci, którzy przyszli później, stoją za nimi w kolejności przybycia. Ta strona odświeża się sama.
drop-footer-drop = Uczciwie: losowanie, które każdy może sprawdzić, a potem kto pierwszy, ten lepszy. Działa dzięki Anteroom.
drop-countdown-label = Otwarcie za
drop-countdown-now = Otwieramy…
drop-unit-hours = godz.
drop-unit-minutes = min
drop-unit-seconds = s
drop-fair-summary = Jak zostało ustalone moje miejsce?
drop-fair-explain = Gdy przedkolejka się otworzyła, ta sprzedaż opublikowała zobowiązanie: SHA-256 tajnego losowego ziarna. W chwili otwarcia ujawniła ziarno, a wszyscy w przedkolejce zostali uporządkowani według HMAC-SHA256(ziarno, ich identyfikator odwiedzającego). Ta strona sprawdza twoje miejsce tutaj, w twojej przeglądarce.
drop-fair-checking = Sprawdzanie…
drop-fair-result = Twoje losowanie: { $draw }…; pozycja { $rank } z { $n }; zobowiązanie się zgadza: { $ok }
drop-fair-yes = tak
drop-fair-no = nie
drop-fair-not-in = Twoje losowanie { $draw }… nie należy do losowań przedkolejki: dołączyłeś po otwarciu, więc twoje miejsce wynika z kolejności przybycia.
drop-fair-mismatch = Ujawnione ziarno nie zgadza się ze zobowiązaniem opublikowanym przed otwarciem.
drop-fair-unavailable = Ta przeglądarka nie może przeprowadzić sprawdzenia (potrzebuje Web Crypto na bezpiecznej stronie). Zapis znajduje się pod adresem { $url }.
drop-fair-failed = Nie udało się dokończyć sprawdzenia: nie można odczytać zapisu uczciwości. Ponowna próba za kilka sekund.

told-title-queued-random = Bierzesz udział w losowaniu
told-lead-queued-random = Za każdym razem, gdy zwalnia się miejsce, spośród wszystkich czekających losowana jest jedna osoba. Wcześniejsze przyjście ani odświeżanie niczego nie zmienia. Ta strona odświeża się sama.
told-footer-random = Uczciwie: losowanie spośród wszystkich czekających. Działa dzięki Anteroom.
told-chances-label = Twoje szanse
told-chances =
    { $n ->
        [one] { $n } czekająca osoba wejdzie w ciągu około { $median }; 1 na 20 w ciągu { $low }, 19 na 20 w ciągu { $high }.
        [few] Około połowa z { $n } czekających osób wejdzie w ciągu { $median }; 1 na 20 w ciągu { $low }, 19 na 20 w ciągu { $high }.
       *[other] Około połowa z { $n } czekających osób wejdzie w ciągu { $median }; 1 na 20 w ciągu { $low }, 19 na 20 w ciągu { $high }.
    }
told-chances-unknown = Jeszcze nieznane: wszyscy czekający wejdą najwyżej w ciągu { $t }.
told-chances-paused = Wstrzymane, dopóki losowanie stoi.
told-note-random-draw = W tej kolejce nie ma miejsc: każdy czekający ma w każdym losowaniu tę samą szansę, niezależnie od tego, kiedy przyszedł. Szanse są równe dla wszystkich i zmieniają się, gdy ludzie dołączają i odchodzą.
told-note-any-time-before = Przyjście w dowolnej chwili przed { $open } jest równie dobre: przedkolejka otwiera się o { $time }, a o { $open } wszyscy w niej zostaną ustawieni w losowej kolejności. Nie trzeba być tu w sekundzie otwarcia.
told-fair-rank-explain = Pozycja to twoje losowanie spośród wszystkich w przedkolejce w chwili otwarcia; twoje miejsce liczy tylko osoby, które wciąż czekają przed tobą, więc jest niższe, gdy część z nich wejdzie.
told-not-live = Nie na żywo: brak aktualizacji od { $t }. Ponawiamy…
told-dismiss = Rozumiem
told-err-unavailable-newcomer = Poczekalnia ma teraz problemy, więc nie udało się jeszcze stanąć w kolejce. Ta strona sama spróbuje ponownie.
told-err-unavailable-kept = Poczekalnia ma teraz problemy. Jeśli miałeś już miejsce w kolejce, zachowujesz je. Ta strona sama spróbuje ponownie.
told-err-places-retry = Ktoś w tej samej sieci (w biurze, w szkole, w sieci komórkowej) ma już tyle miejsc, ile ta kolejka pozwala na jedną sieć. Miejsce się zwolni, gdy jedna z tych osób wejdzie; ta strona sama spróbuje ponownie.
told-pow-noscript = Ta poczekalnia sprawdza twoją przeglądarkę krótkim obliczeniem, zanim staniesz w kolejce, a do tego potrzebny jest JavaScript. Włącz JavaScript dla tej strony i odśwież ją.
told-embed-refused-title = Tej poczekalni nie można tu wyświetlić
told-embed-refused = Poczekalnia „{ $room }” nie pozwala na osadzenie na { $origin }. Jeśli to twoja strona, dodaj { $origin } do embed_origins poczekalni.
