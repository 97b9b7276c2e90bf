"""What the people extractor keeps of a conversation before its turns fold out of the
window: the customer's name, city, contact details, orders, codes, amounts, dates and
problem, and the agent's promises and deadlines, in Portuguese, English and Spanish as
customers really write them (lowercase chat, formal email, phone transcripts).

The sentences here were written for these tests, not taken from any workload."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.resources
import json
from typing import Any

import pytest

from gateway.context import unicode_tables
from gateway.context.common_words import common_words, is_common, ranked_words
from gateway.context.fact_docs import fact_from_json, fact_to_json
from gateway.context.heard import merged_facts, not_heard_before
from gateway.context.people import (
    KEEP_PER_KIND,
    KEEP_SAID_AGAIN,
    KINDS,
    _normal,
    current_facts,
    extract_people_facts,
    said_again,
    spelled_number,
    with_said_again,
)
from gateway.context.people_numbers import said_digits
from gateway.context.people_text import plain
from gateway.context.prompts import one_line
from gateway.context.types import Fact

NOW = 1_700_000_000.0


def turns(*texts: str, role: str = "user") -> list[dict[str, Any]]:
    return [{"role": role, "content": t} for t in texts]


def extract(*texts: str, role: str = "user") -> list[Fact]:
    return extract_people_facts(turns(*texts, role=role), "whatsapp", NOW)


def pairs(facts: list[Fact]) -> set[tuple[str, str]]:
    return {(f.tags[0], f.value) for f in facts}


def kinds(facts: list[Fact]) -> set[str]:
    return {f.tags[0] for f in facts}


# One customer message each: every (kind, value) listed must be among its facts.
FOUND = [
    # Portuguese: chat, formal, transcripts
    ("oi boa tarde, aqui é a Mariana Costa, tudo bem?", {("name", "Mariana Costa")}),
    ("meu nome é joão pedro e comprei uma geladeira", {("name", "joão pedro")}),
    ("quem fala é o Rafael, do apartamento 32", {("name", "Rafael")}),
    (
        "sou a carla, moro em são josé dos campos",
        {("name", "carla"), ("city", "são josé dos campos")},
    ),
    ("sou de Recife e o produto veio quebrado", {("city", "Recife")}),
    ("to aqui em porto alegre esperando a entrega", {("city", "porto alegre")}),
    ("Obrigada pela atenção.\nAtt,\nFernanda Lima", {("name", "Fernanda Lima")}),
    ("pode me chamar de Bia", {("name", "Bia")}),
    ("meu whatsapp é +55 11 91234-5678", {("phone", "+55 11 91234-5678")}),
    ("qualquer coisa me liga no (77) 92770-9129", {("phone", "(77) 92770-9129")}),
    ("o número do pedido é 12345678", {("order", "12345678")}),
    ("pedido PED874025, comprei semana passada", {("order", "PED874025")}),
    # a booking's locator: capitals, few digits, after its word
    ("minha reserva é KXT4PZ", {("order", "KXT4PZ")}),
    ("Beatriz Nogueira\nlocalizador KXT4PZ", {("order", "KXT4PZ")}),
    ("my booking QZ7M2L was cancelled", {("order", "QZ7M2L")}),
    ("abri o protocolo 2024-55123 e ninguém respondeu", {("order", "2024-55123")}),
    ("o código WB53-63 veio com defeito", {("sku", "WB53-63")}),
    ("paguei R$44,50 de frete", {("amount", "R$44,50")}),
    ("cobraram 163 reais a mais na fatura", {("amount", "163 reais")}),
    ("o valor foi R$ 163,00 no cartão", {("amount", "R$ 163,00")}),
    ("paguei cento e cinco reais pelo kit", {("amount", "cento e cinco reais")}),
    # money in slang: "conto" only after digits ("um conto de fadas" is a tale)
    ("paguei 140 conto no cartão", {("amount", "140 conto")}),
    ("custou 50 paus", {("amount", "50 paus")}),
    ("me cobraron 63 pavos", {("amount", "63 pavos")}),
    ("I paid 20 quid for it", {("amount", "20 quid")}),
    ("they charged me 35 pounds for the callout", {("amount", "35 pounds")}),
    ("paguei 200 libras na passagem", {("amount", "200 libras")}),
    # A missing space runs the cents word into the next: the cents are still said.
    (
        "cento e vinte reais e cinquenta centavosdigitei errado",
        {("amount", "cento e vinte reais e cinquenta centavos")},
    ),
    ("me cobraram 120 reais e 50 centavosnao sei porque", {("amount", "120 reais e 50 centavos")}),
    ("comprei dia 16 de outubro e até agora nada", {("date", "dia 16 de outubro")}),
    ("era pra chegar na sexta-feira", {("date", "sexta-feira")}),
    ("chegou no sábado, mas veio errado", {("date", "sábado")}),
    ("entregaram em 29/09 no endereço errado", {("date", "29/09")}),
    ("meu endereço é Av. Paulista, 1000 apto 52", {("address", "Av. Paulista, 1000 apto 52")}),
    ("moro na Rua Sete de Setembro 1781, centro", {("address", "Rua Sete de Setembro 1781")}),
    ("pode mandar pra alameda santos 45", {("address", "alameda santos 45")}),
    ("meu email é ana.souza+loja@gmail.com", {("email", "ana.souza+loja@gmail.com")}),
    (
        "é... meu telefone é tipo onze nove oito sete seis, é, cinco quatro três dois um",
        {("phone", "onze nove oito sete seis, é, cinco quatro três dois um")},
    ),
    ("o pedido é um dois três quatro cinco seis", {("order", "um dois três quatro cinco seis")}),
    # English
    ("Hi, my name's Ana and my package never showed up", {("name", "Ana")}),
    ("hi this is john smith calling about a refund", {("name", "john smith")}),
    ("I'm Ana from Porto Alegre", {("name", "Ana"), ("city", "Porto Alegre")}),
    ("im in atlanta rn", {("city", "atlanta")}),
    ("Kind regards,\nDavid O'Connor", {("name", "David O'Connor")}),
    ("I live in Austin, TX", {("city", "Austin")}),
    ("we're a small shop based in new york city", {("city", "new york city")}),
    ("my phone number is (550) 302-5461", {("phone", "(550) 302-5461")}),
    ("you can call me at 555-123-4567 after 5", {("phone", "555-123-4567")}),
    ("order #824883 arrived damaged", {("order", "#824883")}),
    ("ORD-1234 is still pending", {("order", "ORD-1234")}),
    ("ticket 5531 is still open", {("order", "5531")}),
    ("I was charged $64.30 twice", {("amount", "$64.30")}),
    ("they billed me USD 105 for nothing", {("amount", "USD 105")}),
    (
        "uh they took one hundred five dollars from my card",
        {("amount", "one hundred five dollars")},
    ),
    ("it was delivered September 29, 2025", {("date", "September 29, 2025")}),
    ("I called last friday and nobody answered", {("date", "last friday")}),
    ("the delivery date said 2025-09-29", {("date", "2025-09-29")}),
    (
        "uh my number is five five five, uh, one two three, four five six seven",
        {("phone", "five five five, uh, one two three, four five six seven")},
    ),
    ("the product is lr33-57, the blue one", {("sku", "lr33-57")}),
    ("it says SKU-AB12-34 on the box", {("sku", "SKU-AB12-34")}),
    ("the product code is l r three three five seven", {("sku", "l r three three five seven")}),
    ("ship it to 221B Baker Street please", {("address", "221B Baker Street")}),
    ("I live at Park Road 1500", {("address", "Park Road 1500")}),
    ("email me at Mike.Ross@example.co.uk", {("email", "Mike.Ross@example.co.uk")}),
    # Spanish
    ("Hola buenas, me llamo Lucía Pérez", {("name", "Lucía Pérez")}),
    ("soy Pedro Gómez y vivo en Bogotá", {("name", "Pedro Gómez"), ("city", "Bogotá")}),
    ("Quedo atento.\nSaludos,\nPedro", {("name", "Pedro")}),
    ("le escribo desde Medellín por un cobro", {("city", "Medellín")}),
    ("vivo en la calle Mayor 12, segundo piso", {("address", "calle Mayor 12")}),
    ("mi teléfono es 612 34 56 78", {("phone", "612 34 56 78")}),
    # a country code says phone, whatever the country's grouping
    ("no espera es +34 615 304 135", {("phone", "+34 615 304 135")}),
    ("call me on +44 7911 123456", {("phone", "+44 7911 123456")}),
    ("le llamo al +33 6 12 34 56 78", {("phone", "+33 6 12 34 56 78")}),
    ("me cobraron ciento cinco euros", {("amount", "ciento cinco euros")}),
    ("pagué 20 € de envío", {("amount", "20 €")}),
    ("me cobraron 105 dólares", {("amount", "105 dólares")}),
    ("el cargo fue de € 20", {("amount", "€ 20")}),
    ("el pedido llegó el 3 de mayo", {("date", "3 de mayo")}),
    ("número de pedido: 88123", {("order", "88123")}),
    ("el viernes pasado me llegó otro producto", {("date", "viernes pasado")}),
    # Transcripts, titles and abbreviations
    ("uh yeah hi my name is, uh, Robert Johnson", {("name", "Robert Johnson")}),
    ("é, então, meu nome é, é, Cláudia, e eu tô ligando", {("name", "Cláudia")}),
    ("My name is Dr. Anna Schmidt", {("name", "Anna Schmidt")}),
    ("quem fala é a Dona Maria", {("name", "Maria")}),
    # "fala" typed with one letter wrong, missing or doubled
    (
        "ei, boa tarde, aqui quem faka é Patrícia Costa. to com um problema",
        {("name", "Patrícia Costa")},
    ),
    ("quem fla é o Rafael", {("name", "Rafael")}),
    ("aqui quem faala é Beatriz", {("name", "Beatriz")}),
    ("I live in St. Louis", {("city", "St. Louis")}),
    ("i'm from rio de janeiro", {("city", "rio de janeiro")}),
    (
        "Hi team,\n\nThe blender broke.\n\nThanks,\nEmily Carter\n(555) 201-3344",
        {("name", "Emily Carter")},
    ),
    ("my zip code is 02139 and my order is 40021", {("order", "40021")}),
    ("the model is QN65Q80C", {("sku", "QN65Q80C")}),
    (
        "sí, mire, el número del pedido es cinco cinco tres dos uno",
        {("order", "cinco cinco tres dos uno")},
    ),
    (
        "yeah it's uh seven one eight, five five five, two three four one",
        {("phone", "seven one eight, five five five, two three four one")},
    ),
    ("it was supposed to arrive on the fifteenth of march", {("date", "fifteenth of march")}),
    # The city said as "my city is", and where an order goes
    ("city is Portland, Oregon", {("city", "Portland")}),
    ("my city's Denver btw", {("city", "Denver")}),
    ("a cidade é Niterói", {("city", "Niterói")}),
    ("minha cidade é Juiz de Fora", {("city", "Juiz de Fora")}),
    ("la ciudad es Sevilla", {("city", "Sevilla")}),
    ("a entrega é pra Niterói, no centro", {("city", "Niterói")}),
    ("vocês podem entregar em Campinas?", {("city", "Campinas")}),
    ("the delivery to Austin never happened", {("city", "Austin")}),
    ("can you ship it to Leeds instead", {("city", "Leeds")}),
    ("el envío a Valencia tarda mucho", {("city", "Valencia")}),
    ("pode mandar para Porto mesmo", {("city", "Porto")}),
    ("I live in Campina Grande", {("city", "Campina Grande")}),
    ("moro em porto seguro", {("city", "porto seguro")}),
    # Emails and house numbers read out on a call
    ("my email is danderson at hotmail dot com", {("email", "danderson at hotmail dot com")}),
    ("ana underscore souza at gmail dot com", {("email", "ana underscore souza at gmail dot com")}),
    (
        "meu email é joao ponto silva arroba gmail ponto com",
        {("email", "joao ponto silva arroba gmail ponto com")},
    ),
    ("mi correo es maria arroba hotmail punto com", {("email", "maria arroba hotmail punto com")}),
    (
        "es pedro guión bajo lopez arroba yahoo punto es",
        {("email", "pedro guión bajo lopez arroba yahoo punto es")},
    ),
    ("my e-mail is info at acme dot com dot br", {("email", "info at acme dot com dot br")}),
    ("I live at oak avenue sixty", {("address", "oak avenue sixty")}),
    ("send it to park road fifteen hundred", {("address", "park road fifteen hundred")}),
    ("moro na rua das flores cento e vinte", {("address", "rua das flores cento e vinte")}),
    (
        "é na avenida brasil mil e duzentos, apto 3",
        {("address", "avenida brasil mil e duzentos, apto 3")},
    ),
    ("vivo en la calle mayor doce", {("address", "calle mayor doce")}),
    ("rua das flores cento e vinte, um abraço", {("address", "rua das flores cento e vinte")}),
    # An address after a delivery cue, its street named first or its number first
    ("deliver to oak avenue sixty please", {("address", "oak avenue sixty")}),
    ("send it to 12 park road", {("address", "12 park road")}),
    ("ship to park road 1500", {("address", "park road 1500")}),
    ("please deliver it to Maple Street 42", {("address", "Maple Street 42")}),
    ("send the replacement to oak avenue, number 60", {("address", "oak avenue, number 60")}),
    ("entregar na rua das flores cento e vinte", {("address", "rua das flores cento e vinte")}),
    ("enviar a calle mayor doce", {("address", "calle mayor doce")}),
    # A product code keeps the word "sku" said before it; a code's letters read out
    ("item sku aa64-26 i stayed home", {("sku", "sku aa64-26")}),
    ("aquele de código s e nove cinco cinco sete", {("sku", "s e nove cinco cinco sete")}),
    # A filler inside the cue ("soy este de", "sou tipo de")
    ("y entonces soy este de valencia pero bueno", {("city", "valencia")}),
    ("sou tipo de curitiba mas enfim", {("city", "curitiba")}),
    ("i'm like from boston honestly", {("city", "boston")}),
    # Digits read one by one are a code, whatever word before them a call garbled
    (
        "aí o pedindo então é nove três um seis zero cinco então meu vizinho",
        {("order", "nove três um seis zero cinco")},
    ),
    ("the number is four four one two eight zero", {("order", "four four one two eight zero")}),
    # Abbreviated street types, Spanish doors and floors, "2" for "to", tens run together
    ("it's Elm St 2358 Suite 209 i'm pretty upset", {("address", "Elm St 2358 Suite 209")}),
    ("dirección: C/ Alcalá 1672", {("address", "C/ Alcalá 1672")}),
    (
        "mi dirección es Av. de la Constitución 484 5º A",
        {("address", "Av. de la Constitución 484 5º A")},
    ),
    ("es en Calle Mayor 147 piso 4, puerta B", {("address", "Calle Mayor 147 piso 4, puerta B")}),
    ("ship it 2 High Street 681 Unit 312", {("address", "High Street 681 Unit 312")}),
    (
        "it's oak avenue two thousand four hundred fortynine and then i'm at work",
        {("address", "oak avenue two thousand four hundred fortynine")},
    ),
    # Names that are also words stay names
    ("sou a Ana", {("name", "Ana")}),
    ("I'm Ana Souza", {("name", "Ana Souza")}),
    ("soy Pedro", {("name", "Pedro")}),
    ("I'm Grace", {("name", "Grace")}),
    ("soy Clara, la de ayer", {("name", "Clara")}),
    ("my name is Rosa", {("name", "Rosa")}),
    # Introductions by "speaking", "falando", after a letter's salutation
    ("hey, Ryan speaking. so it says delivered", {("name", "Ryan")}),
    ("oi oi, Thiago falando. preciso resolver uma coisa", {("name", "Thiago")}),
    ("Dear support team, hello, Jessica here. is this in stock?", {("name", "Jessica")}),
    ("olá, boa tarde, Lucas aqui e o seguinte diz entregue", {("name", "Lucas")}),
    ("boa noite preciso de ajuda João aqui. é o seguinte", {("name", "João")}),
    ("qué tal aquí elena tengo un problema", {("name", "elena")}),
    ("buenas, hola, habla Miguel. pues el reembolso nunca llegó", {("name", "Miguel")}),
    # in lowercase, a first name people are given (Faker's lists)
    ("hi there i'm daniel thomas here's the thing", {("name", "daniel thomas")}),
    # A big city (GeoNames) where the cue is misspelt or only says where something goes
    ("I'm baded in Boston, I'm not great with apps", {("city", "Boston")}),
    ("i livve in Portland. my neighbor ordered the same", {("city", "Portland")}),
    ("it's um going to Leeds and also the agent", {("city", "Leeds")}),
    ("shippign 2 Boston. I need this sorted soon", {("city", "Boston")}),
    # an email read out with its digits said as words
    (
        "it's angie dot torres seventy seven at gmail dot com angie with an i e",
        {("email", "angie dot torres seventy seven at gmail dot com")},
    ),
    # streets named after people by their title, or by a code; the district after the door
    (
        "moro no bigorrilho, rua padre anchieta 1800 ap 62",
        {("address", "rua padre anchieta 1800 ap 62")},
    ),
    (
        "É Av. T-63, 1450, apto 1203, Setor Bueno. Tem portaria 24h.",
        {("address", "Av. T-63, 1450, apto 1203, Setor Bueno")},
    ),
    ("Rua Augusta 45, Curitiba", {("address", "Rua Augusta 45"), ("city", "Curitiba")}),
    # a name signed under "Best wishes," or "Many thanks," (a phone under it)
    (
        "Please let me know.\n\nBest wishes,\nSarah Okafor\n07912 345 678",
        {("name", "Sarah Okafor")},
    ),
    ("Many thanks,\nAna Souza", {("name", "Ana Souza")}),
    # a sign-off or a name after the address is no district
    ("12 Oak St, Regards.", {("address", "12 Oak St")}),
    ("Rua Augusta 1500, Mariana.", {("address", "Rua Augusta 1500")}),
    # a number right after a word for paying is money, with no currency said
    ("a oficina me mandou msg q o orçamento deu 8.900. eu pago a franquia?", {("amount", "8.900")}),
    ("paguei 350 na entrega e nada", {("amount", "350")}),
    ("the quote came to 1,250 which is a lot", {("amount", "1,250")}),
    # where the customer's business is: a big city after its office, shop or store
    ("we're a courier firm, head office is in Leeds, 45 drivers", {("city", "Leeds")}),
    ("a loja fica em Campinas, perto do centro", {("city", "Campinas")}),
    ("nuestra tienda está en Sevilla", {("city", "Sevilla")}),
    # a turn with no capital letter says nothing by its case: where the order goes, a
    # big city that ends the clause
    ("like so it's going to dublin", {("city", "dublin")}),
    ("it's um going to to toronto and then i've always", {("city", "toronto")}),
    ("vai pra curitiba e outra coisa", {("city", "curitiba")}),
    ("cidade Belo Horizonte", {("city", "Belo Horizonte")}),
    ("cidade de belo horizonte", {("city", "belo horizonte")}),
    ("me mudei para São José dos Campos mês passado", {("city", "São José dos Campos")}),
    # money said after a bare amount: where it was paid, what it adds up to
    ("deu 185 e 39 no total e ninguém me explica", {("amount", "185 e 39")}),
    ("saiu 29 conto no cartão e não chegou", {("amount", "29 conto")}),
    # a code read out letter by letter may start with an "a"
    ("the item code is a c four four one two", {("sku", "a c four four one two")}),
    ("o código do produto é a p três oito zero nove", {("sku", "a p três oito zero nove")}),
    ("the item code is b k four four one two", {("sku", "b k four four one two")}),
    # in a pasted log a date or a code next to a log's words is still read
    ("comprei dia 2025-06-25 e nada", {("date", "2025-06-25")}),
    ("log: [orders-api] failed, my order is 778812", {("order", "778812")}),
    # a product's code in capitals, few digits; a device's model after the word for phone
    ("o código do kit é BX-TRIO-4, veio sem a tampa", {("sku", "BX-TRIO-4")}),
    ("o kit que comprei, o BX-TRIO-44, veio sem a tampa", {("sku", "BX-TRIO-44")}),
    ("my phone is the XR-A1256-64-BK model", {("sku", "XR-A1256-64-BK")}),
    # a code's dash said as a word on a call: one code, no phone (eight digits)
    (
        "the dispute is d s p dash two six dash one one eight four zero two",
        {("order", "d s p dash two six dash one one eight four zero two")},
    ),
    (
        "o protocolo é quatro cinco traço um dois três quatro",
        {("order", "quatro cinco traço um dois três quatro")},
    ),
    ("my claim is 4471203 and nobody called", {("order", "4471203")}),
    # an email read out whose domain the transcript split in two, after "email"
    (
        "yeah and the email is uh derek at brightpath dental dot com, one word",
        {("email", "derek at brightpath dental dot com")},
    ),
    # a house number said in words before its street, as a call's transcript writes it
    (
        "it's eighteen forty east speedway boulevard apartment two oh six tucson",
        {("address", "eighteen forty east speedway boulevard apartment two oh six")},
    ),
    (
        "my address is four four one seven north pearl street",
        {("address", "four four one seven north pearl street")},
    ),
    ("minha OS é 7740218 e o técnico não veio", {("order", "7740218")}),
    (
        "uh it's two six dash zero four four one nine three",
        {("order", "two six dash zero four four one nine three")},
    ),
]


@pytest.mark.parametrize(("text", "expected"), FOUND, ids=[t[:40] for t, _ in FOUND])
def test_finds_the_facts_a_customer_states(text: str, expected: set[tuple[str, str]]) -> None:
    facts = extract(text)
    assert expected <= pairs(facts)
    for fact in facts:
        # later code finds and redacts by the value, one line as a fact is
        assert fact.value in one_line(text)


# One customer message each: no fact of that kind may come out of it.
ABSENT = [
    # a word for a file that also has sums: a short number after it is a sum, and "a
    # million" read after it is no code
    ("ok. the claim was 865 total right?", "order"),
    ("I paid twenty five dollars on the road", "address"),
    # a sum said after a word for a file, in words or after "for"/"de"; a year after "OS";
    # cash on delivery; a phone read out with dashes (ten digits) is no code
    ("my claim is for twelve thousand five hundred", "order"),
    ("a disputa é de vinte e cinco mil", "order"),
    ("el siniestro fue de treinta mil", "order"),
    ("my claim is for 12500", "order"),
    ("o sinistro foi de 40000", "order"),
    ("the OS 2023 update broke it", "order"),
    ("I paid COD 350 for the delivery", "sku"),
    ("it's four one five dash five five five dash zero one nine nine", "order"),
    ("I bought it at best buy dot com last week", "email"),
    ("one main street is where the old store was", "address"),
    ("the dispute and the fraud thing, my husband will ask me a million questions", "order"),
    # money's slang words name things too: an amount only where money is spoken of
    ("minha filha pediu um conto de fadas", "amount"),
    ("comprei 2 paus de selfie e um veio quebrado", "amount"),
    ("compré dos pavos y solo llegó uno", "amount"),
    ("ganhei 2 pratas no campeonato", "amount"),
    ("I need 4 quid codes", "amount"),
    ("meu pedido era pra chegar até 16h30 e nada", "order"),  # a time of day
    ("booking for 2 adults in room B12", "order"),
    ("my order is for the iPhone X2", "order"),
    ("order placed at 10am, still nothing", "order"),
    ("I lost 10 pounds since the surgery", "amount"),  # a weight, no money spoken of
    # a weight where money is spoken of too (the review of a4f788b)
    ("you charged me shipping for a 50 pounds box but it only weighs 20 pounds", "amount"),
    ("They charged me for 30 pounds of luggage, I only had 20 pounds", "amount"),
    ("me cobraron el envío de un paquete de 5 libras, pero pesa 2 libras", "amount"),
    ("o frete cobrou 10 libras a mais de peso", "amount"),
    ("meu pedido era pra chegar até 16h30m e nada", "order"),
    # a count of last month's things, no day of it (the review of c6fa82c)
    ("five of last month's orders never came", "date"),
    ("tenho 12 do mês passado para pagar", "date"),
    ("las 3 del mes pasado llegaron rotas", "date"),
    # a product or room in capitals after an order's word: no locator (the review of 57ccd62)
    ("meu pedido IPHONE15 veio errado", "order"),
    ("booking for ROOM12 please", "order"),
    ("the parcel weighs 40 pounds", "amount"),
    ("compré 20 libras de harina", "amount"),
    ("I'm so upset", "name"),
    ("quem fez é a Maria, minha esposa, que comprou", "name"),  # not "fala" misspelt
    ("quem fica é o Pedro em casa pra receber", "name"),
    ("I'm calling about my order", "name"),
    ("I'm in Atlanta", "name"),
    ("sou cliente há anos", "name"),
    ("sou muito paciente mas isso passou do limite", "name"),
    ("this is ridiculous, third time I write", "name"),
    ("this is the second time I'm asking", "name"),
    ("soy cliente desde hace años", "name"),
    ("soy de Bogotá", "name"),
    ("thanks, that helps", "name"),
    ("I'm not sure it was delivered", "name"),
    ("moro perto do centro", "city"),
    ("estou em dúvida sobre a cobrança", "city"),
    ("I'm in a hurry please", "city"),
    ("I'm in trouble with this payment", "city"),
    ("desde ayer no puedo entrar", "city"),
    ("estoy en casa toda la tarde", "city"),
    ("semana passada eu liguei", "date"),
    ("I ordered it a while ago, maybe last week", "date"),
    ("na segunda vez que liguei ninguém atendeu", "date"),
    ("support should be 24/7", "date"),
    ("2 days on the way already", "address"),
    ("I ordered 3 items", "order"),
    ("my zip is 90210", "order"),
    ("meu cep é 01310-100", "order"),
    ("I called once three times", "phone"),
    ("pedido +34 615 304 135", "phone"),  # a cue says order
    ("precio +34,50 euros", "phone"),
    ("o video teve +12.000.000 de visualizações", "phone"),  # "+" is "more than"
    ("ya son +1,250,000,000 usuarios afectados", "phone"),
    ("crescimento de +15 20 25 30 por cento", "phone"),
    ("the counter went +10 -20 -30 -15 -22 -40", "phone"),
    ("the 3 real problems", "amount"),
    ("my zip code is 02139", "sku"),
    ("I paid with my visa ending 4242", "order"),
    ("this is Maria from accounts payable", "city"),
    ("I'm from the accounting department", "city"),
    ("i live in an apartment on the 3rd floor", "city"),
    ("soy la titular de la cuenta", "name"),
    # A state or a mood after "sou", "I'm", "soy", "this is" is no name
    ("sou ruim com essas coisas", "name"),
    ("tô chateada com vocês", "name"),
    ("estou cansado de esperar", "name"),
    ("I'm frustrated", "name"),
    ("I'm Frustrated!!", "name"),
    ("I'm not great with apps", "name"),
    ("estoy harta", "name"),
    ("soy nuevo en esto", "name"),
    ("sou péssima com tecnologia", "name"),
    ("sou leiga nisso", "name"),
    ("sou idosa e não entendo", "name"),
    ("soy malísima con esto", "name"),
    ("soy mayor y no entiendo", "name"),
    ("I'm terrible with this stuff", "name"),
    ("I'm retired and not techy", "name"),
    ("this is nonsense", "name"),
    # Where an order goes that is no city; how a city is
    ("pode entregar em mãos", "city"),
    ("a entrega é pra amanhã", "city"),
    ("vou mandar em anexo", "city"),
    ("pode mandar para mim", "city"),
    ("envío a domicilio", "city"),
    ("el envío a tiempo es importante", "city"),
    ("ship it to me please", "city"),
    ("delivery to my house", "city"),
    ("ship to Baker Street", "city"),
    ("the city is big", "city"),
    ("a cidade é pequena", "city"),
    ("la ciudad es bonita", "city"),
    ("vai entregar em quantos dias?", "city"),
    # "at ... dot com" is a website, unless an address is read out
    ("I bought it at amazon dot com", "email"),
    ("I ordered at bestbuy dot com", "email"),
    ("look at gmail dot com", "email"),
    ("comprei no site da loja ponto com", "email"),
    ("compré en mercadolibre punto com", "email"),
    # A street followed by a number of something else
    ("my kids drive two hours to school", "address"),
    ("we drive 2 hours to get there", "address"),
    ("rua augusta um tempo atrás era melhor", "address"),
    ("fiquei na rua esperando duas horas", "address"),
    # What the customer does, not where they are from
    ("sou de comprar sempre aqui", "city"),
    ("sou tipo de reclamar pouco", "city"),
    # A count, an amount, a postal code: not read one digit at a time, or said to be no code
    ("I have two kids one four and five", "order"),
    ("paguei duzentos e sessenta e cinco reais", "order"),
    ("meu cep é zero um três um zero", "order"),
    ("I walked down the road 3 blocks", "address"),
    ("I need to drive 3 of them to work", "address"),
    ("deliver to oak avenue sixty please", "city"),
    # A place that is no city alone, and how old a city is
    ("moro na vila", "city"),
    ("a cidade é velha", "city"),
    # A big city's name with no cue for the customer's own city
    ("my parcel is stuck in Memphis", "city"),
    ("in Jackson's case the refund came", "city"),
    ("I use it in mobile and desktop", "city"),
    ("I'm going to be fine", "city"),
    ("send it to Boston Avenue 12", "city"),
    ("we're going to split the payment", "city"),
    ("we are going to split the payment", "city"),  # uncased: Split goes on, no city
    ("we are going to reading the manual now", "city"),
    ("so i'm going to Nice people", "city"),
    ("mandaram pra loja errada", "city"),
    ("vou pra loja amanhã trocar", "city"),
    ("minha cidade natal é muito longe", "city"),
    ("the agent in Charlotte told me to wait", "city"),
    ("tengo mi cuenta en Santander", "city"),
    ("you sent a Phoenix lamp instead", "city"),
    ("going to Columbia Records", "city"),
    ("please ship 2 Victoria chairs", "city"),
    ("I'm flying to Paris next week", "city"),
    ("meu filho mora em Curitiba", "city"),
    ("my package is stuck in customs in Miami", "city"),
    # Not a name: words before "speaking", places and companies after "aquí"
    ("Technically speaking, the order never arrived", "name"),
    ("Sinceramente falando, o produto é ruim", "name"),
    ("hola, aquí Madrid hace calor y no llegó", "name"),
    ("buenas, aquí Movistar me cobró doble", "name"),
    ("hola aquí segundo intento de contacto", "name"),
    # A word in lowercase that no one is named is a slip, not a name
    ("i'm petty upset about all this", "name"),
    ("hola aquí tengo un problema", "name"),
    ("hola, habla con el gerente", "name"),
    # "actually" said of someone else corrects nothing
    ("the refund covers the amount you actually paid.", "name"),
    ("eles na verdade mandaram outro.", "name"),
    # money words after counts make no amount
    ("chegaram 2 e 3 caixas no total", "amount"),
    ("li 3 contos do Machado no total", "amount"),
    ("saiu 10 e 15 dias no total", "amount"),
    # a filler inside a cue makes no city of what follows
    ("my city uh is lovely in the spring", "city"),
    # a pasted log's timestamps, request ids and status codes are no orders
    ("2025-03-02T10:11:12.345Z ERROR [orders-api] req=9f3ab2c1 GET /api/v2/me 401", "order"),
    ('2025-03-02 10:11:14,120 INFO File "/srv/orders/views.py", line 88', "order"),
    ("[orders-api] req=fbdaebc8 app=northwind POST /api/v2/session 500 Internal", "order"),
    ("I had COVID-19 twice this year", "sku"),
    ("the A-1-B form is fine", "sku"),
    ("our region is US-EAST-1, the error ERR-CONN-5", "sku"),
    ("call me at 1-800-FLOWERS", "sku"),
    ("o padre 2 vezes repetiu", "address"),
    ("I bought one at target dot com last week", "email"),
    # after a word for paying, a count of things or a year is no amount
    ("paguei 3 vezes a mesma fatura", "amount"),
    ("I paid 40 invoices this month", "amount"),
    ("we paid 2019 and 2020 already", "amount"),
    # a business "in" a big city, with no "is": where it is, not where the customer is
    ("the store in Boston sent me the wrong item", "city"),
    ("sua loja em Campinas me atendeu mal", "city"),
    ("sua loja fica em Campinas?", "city"),
    # an account or a quote's number is no amount
    ("mi cuenta es 458812", "amount"),
    ("My quote is 48213 and I'd like to accept it", "amount"),
    # a business "in" something that is no big city
    ("the office is in chaos today", "city"),
    ("our store is in London Road", "city"),
]


@pytest.mark.parametrize(("text", "kind"), ABSENT, ids=[t[:40] for t, _ in ABSENT])
def test_common_words_are_not_taken_for_facts(text: str, kind: str) -> None:
    assert kind not in kinds(extract(text))


def test_a_fact_is_shaped_for_the_facts_block() -> None:
    text = "meu email é ana@loja.com.br e moro em Niterói"
    facts = {f.tags[0]: f for f in extract_people_facts(turns(text), "voice", NOW)}
    email, city = facts["email"], facts["city"]
    assert email.id == hashlib.blake2b(b"email:ana@loja.com.br", digest_size=8).hexdigest()
    assert email.text == "email: ana@loja.com.br"
    assert (email.scope, city.scope) == ("verified", "basic")
    assert email.tags[0] == "email" and city.tags[0] == "city"
    assert email.source_channel == "voice" and email.extracted
    assert NOW <= email.created_at < NOW + 1e-3
    assert all(f.tags[0] in KINDS for f in facts.values())


def test_an_email_read_out_is_a_verified_contact_as_said() -> None:
    text = "claro, é joao ponto silva arroba gmail ponto com"
    (email,) = (f for f in extract(text) if f.tags[0] == "email")
    assert email.value == "joao ponto silva arroba gmail ponto com"
    assert email.scope == "verified"


def test_later_messages_are_dated_later() -> None:
    facts = extract("my order is 55123", "ok", "and the other one is ORD-99812")
    first, second = (f for f in facts if f.tags[0] == "order")
    assert first.value == "55123" and second.value == "ORD-99812"
    assert NOW <= first.created_at < second.created_at < NOW + 3e-3


def test_system_and_tool_messages_are_not_read() -> None:
    messages = [
        {"role": "system", "content": "You are Ana from Recife, order ORD-5555."},
        {"role": "tool", "content": '{"email": "bot@shop.com", "phone": "(11) 91234-5678"}'},
        {"role": "user", "content": [{"type": "text", "text": "meu nome é Júlia"}]},
    ]
    assert pairs(extract_people_facts(messages, "chat", NOW)) == {("name", "Júlia")}


def test_one_value_in_two_spellings_is_one_fact() -> None:
    facts = extract("paguei R$ 163,00", "isso, 163 reais")
    amounts = [f for f in facts if f.tags[0] == "amount"]
    assert len({f.id for f in amounts}) == 1


def test_a_product_code_with_and_without_sku_is_one_fact() -> None:
    facts = extract("o produto é SKU-HF19-40", "item sku hf19-40", "product hf19-40")
    assert len({f.id for f in facts if f.tags[0] == "sku"}) == 1


def test_a_phone_said_with_and_without_country_code_is_one_fact() -> None:
    facts = extract("meu cel é (11) 91234-5678", "ou +55 11 91234-5678")
    assert len({f.id for f in facts if f.tags[0] == "phone"}) == 1


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I paid $105", "they took one hundred five dollars"),
        ("paguei R$ 163,00", "foram 163 reais"),
        ("paguei R$ 5.000,00", "paguei 5 mil reais"),
        ("it cost $2,000", "it cost 2k dollars"),
        ("the product is lr33-57", "the product code is l r three three five seven"),
        ("o pedido é 123456", "o pedido é um dois três quatro cinco seis"),
        (
            "my phone is (912) 345-6789",
            "my phone is nine one two three four five six seven eight nine",
        ),
        ("it came on march 28", "it came on march twenty-eight"),
    ],
)
def test_a_value_written_or_spelled_out_is_one_fact(first: str, second: str) -> None:
    facts = [f for f in extract(first, second) if f.tags[0] != "problem"]
    assert len(facts) == 1, facts
    assert facts[0].value in second  # the latest statement's own characters


def test_agent_turns_give_promises_and_deadlines_only() -> None:
    agent = [
        "I can offer $64.30 as a refund, processed within 3 business days.",
        "Consigo devolver R$ 149,90 até 21/02.",
        "Le reembolsamos 20 euros antes del viernes.",
        "We'll have the replacement there by march twenty-eight.",
        "Vamos estornar o valor em até 5 dias úteis.",
        "El técnico irá el próximo lunes.",
        "i'll re fund eighty dollars to your card",
    ]
    facts = extract(*agent, role="assistant")
    assert {
        ("promise", "eighty dollars"),
        ("promise", "$64.30"),
        ("deadline", "within 3 business days"),
        ("promise", "R$ 149,90"),
        ("deadline", "até 21/02"),
        ("promise", "20 euros"),
        ("deadline", "antes del viernes"),
        ("deadline", "by march twenty-eight"),
        ("deadline", "em até 5 dias úteis"),
        ("deadline", "próximo lunes"),
    } <= pairs(facts)
    assert kinds(facts) <= {"promise", "deadline"}
    assert all(f.text.endswith("(the agent said)") for f in facts)


@pytest.mark.parametrize(
    ("said", "deadline"),
    [
        ("We'll have it fixed by March 28.", "by March 28"),
        ("Você recebe até 21/02, tá bom?", "até 21/02"),
        ("Vou te retornar até sexta.", "até sexta"),
        ("Le llegará antes del viernes.", "antes del viernes"),
        ("O reembolso cai em até 5 dias úteis.", "em até 5 dias úteis"),
        ("Seu estorno cai em até 7 dias úteis.", "em até 7 dias úteis"),
        ("Returns are accepted within 90 days, but I'll ship yours by Friday.", "by Friday"),
        ("Normalmente demora, mas vamos resolver até amanhã.", "até amanhã"),
        ("Su reembolso se procesa en 3 días hábiles.", "en 3 días hábiles"),
        ("Orders placed today ship tomorrow, and yours will arrive by Monday.", "by Monday"),
        ("Le devolvemos el dinero en 5 días hábiles.", "en 5 días hábiles"),
        # a visit booked, the day after a colon
        ("Visita agendada: quarta-feira, 08/04, entre 8h e 12h.", "agendada: quarta-feira, 08/04"),
    ],
)
def test_the_agent_commits_to_a_deadline_for_this_case(said: str, deadline: str) -> None:
    assert ("deadline", deadline) in pairs(extract(said, role="assistant"))


@pytest.mark.parametrize(
    ("said", "reference"),
    [
        ("Pronto! Abri a reclamação. Protocolo: RES-2026-071193.", "RES-2026-071193"),
        ("Done, your case number is CS-480215; quote it if you call again.", "CS-480215"),
        ("Ya abrí la solicitud. Caso: RC-77120, plazo de 5 días hábiles.", "RC-77120"),
        ("I've booked the visit, your job reference is PV-20931.", "PV-20931"),
        ("anotado o protocolo é seis um dois um nove", "seis um dois um nove"),
        ("Su número de radicado es 20260311-4471.", "20260311-4471"),
        # a service order, as Brazil's technicians write it
        ("Abri uma OS separada pra geladeira: OS 7740218.", "7740218"),
    ],
)
def test_the_agent_gives_a_reference_to_quote(said: str, reference: str) -> None:
    """The number an agent gives the customer to quote later (a protocol, a case, a
    job reference, typed or read out on a call) is kept as the agent's."""
    facts = [f for f in extract(said, role="assistant") if f.tags[0] == "order"]
    assert [f.value for f in facts] == [reference], facts
    assert facts[0].text.endswith("(the agent said)")


def test_an_agents_references_do_not_push_out_the_customers_orders() -> None:
    """A customer's two orders, then an agent who opens one case more than a kind keeps
    over the conversation: the customer's orders stay, with the agent's newest references
    beside them; an order the agent says back is one fact."""
    facts = extract("my orders are ORD-310001 and ORD-310002")
    said = [f"Done, your case number is CS-4802{n:02}." for n in range(KEEP_PER_KIND + 1)]
    for n, text in enumerate([*said, "Your order number is ORD-310002, right?"], 1):
        turn = turns(text, role="assistant")  # each heard as its turn is, the known known
        facts = merged_facts(facts, extract_people_facts(turn, "webchat", NOW + n, facts))
    orders = sorted(f.value for f in facts if f.tags[0] == "order")
    newest = [f"CS-4802{n:02}" for n in range(1, KEEP_PER_KIND + 1)]
    assert orders == [*newest, "ORD-310001", "ORD-310002"], orders


@pytest.mark.parametrize(
    "said",
    [
        "The scanner shows code P0301, a misfire on cylinder 1.",
        "O modelo BRM44HB tem garantia de 12 meses.",
        "You can also call us on 0800 555 0199, Monday to Friday.",
        "Your order total came to 150 with shipping.",
        "Our protocol is to answer within 24 hours.",
        "Caso não chegue, ligue para 11 98765-4321.",
        "Any problem with the claim, ring 07700 900123.",
        "I have opened a case for you. Error 50312 is a known problem.",
        "The case for the iPhone 15, model A3090, is in stock.",
        "Coloquei no pedido para o técnico chegar até as 16h30.",  # a time of day
        "Su pedido llega mañana entre las 9h15min y las 11h.",
    ],
)
def test_an_agents_other_codes_are_no_reference(said: str) -> None:
    assert not [f for f in extract(said, role="assistant") if f.tags[0] == "order"]


@pytest.mark.parametrize(
    "said",
    [
        "Refunds are processed within 10 business days.",
        "Returns are accepted within 90 days",
        "Refunds are processed within 10 business days of receiving your return.",
        "Our standard shipping usually arrives within 5 days.",
        "Os reembolsos são feitos em até 10 dias úteis.",
        "Normalmente o estorno cai em até 7 dias úteis.",
        "Lembrando que as trocas podem ser feitas em até 30 dias.",
        "Las devoluciones se aceptan hasta 30 días después.",
        "Se aceptan cambios hasta 15 días después de la compra.",
        "Por lo general los envíos tardan 3 días hábiles.",
        "I'll note it down; refunds are processed within 10 days.",
        "Normally we refund within 3 days, but I'll do it today.",
        "Exchanges can be requested within 7 days of receipt.",
        "A troca pode ser feita em até 7 dias.",
        "Os pedidos chegam em até 3 dias úteis.",
        "Los reembolsos se procesan en un plazo de 10 días.",
        "Vou deixar registrado até segunda ordem.",
    ],
)
def test_a_policy_the_agent_recites_is_no_deadline(said: str) -> None:
    assert "deadline" not in kinds(extract(said, role="assistant"))


@pytest.mark.parametrize(
    ("said", "amount"),
    [
        ("o valor de trezentos e oitenta reais vai ser abatido do seu próximo boleto",
         "trezentos e oitenta reais"),
        ("al hacer el check in se libera la retención de trescientos euros de su tarjeta",
         "trescientos euros"),
        ("I'm putting a credit of one hundred and fifty dollars on your account",
         "one hundred and fifty dollars"),
        ("as a goodwill gesture we're crediting forty pounds to your account",
         "forty pounds"),
    ],
)  # fmt: skip
def test_money_the_agent_takes_off_a_bill_or_releases_is_a_promise(said: str, amount: str) -> None:
    """A deduction from the next bill, or a hold released, is money coming back to the
    customer: the agent's promise, in words as on a call."""
    assert ("promise", amount) in pairs(extract(said, role="assistant"))


@pytest.mark.parametrize(
    "said",
    [
        "Your order total was $50 and my name is Carla.",
        "Seu pedido de R$ 250,00 foi liberado para envio.",
        "O limite de R$ 2.000 do seu cartão foi liberado.",
    ],
)
def test_an_amount_the_agent_only_mentions_is_no_promise(said: str) -> None:
    assert "promise" not in kinds(extract(said, role="assistant"))


@pytest.mark.parametrize(
    "said",
    [
        "Vamos reembolsar o frete; o pacote pesa 5 libras.",
        "We will refund the shipping cost; the box weighed 15 pounds.",
        "Crédito de R$ 10,00 aplicado. Total da próxima fatura: R$ 89,90",
    ],
)
def test_what_an_offer_does_not_give_back_is_no_promise(said: str) -> None:
    """A weight in the sentence after a refund, a bill's total after a credit: the
    offer's word gives back what its own sentence names."""
    promised = [v for k, v in pairs(extract(said, role="assistant")) if k == "promise"]
    assert promised in ([], ["R$ 10,00"]), promised


@pytest.mark.parametrize(
    ("said", "amount"),
    [
        ("Conforme combinado, vamos estornar:\nR$ 45,90 na sua próxima fatura.", "R$ 45,90"),
        ("Reembolso aprovado.\nValor: R$ 89,90", "R$ 89,90"),
        ("We'll refund you\n$45.90\nwithin 5 business days.", "$45.90"),
    ],
)
def test_an_offer_whose_amount_is_on_the_next_line_promises_it(said: str, amount: str) -> None:
    """A line that holds the amount and little else takes the offer of the line above."""
    assert ("promise", amount) in pairs(extract(said, role="assistant"))


def test_a_bill_read_out_line_by_line_promises_none_of_its_lines() -> None:
    """A word of giving money back offers the amount of its own line: not the total or
    the next lines of a bill the agent reads out; and a credit of nothing is no promise."""
    said = (
        "Vou te explicar a composição da fatura de março:\n\n"
        "• Plano Fibra 500 Mega: R$ 99,90\n"
        "• Serviço de Visita Técnica Improdutiva: R$ 30,10\n"
        "• Crédito por indisponibilidade: R$ 0,00\n\n"
        "Total: R$ 159,90\n"
        "• Vamos devolver R$ 30,10 na próxima fatura."
    )
    promised = [v for k, v in pairs(extract(said, role="assistant")) if k == "promise"]
    assert promised == ["R$ 30,10"]


@pytest.mark.parametrize(
    "said",
    [
        "o telefone cadastrado no contrato é 11 98765-4321",
        "the phone number on my contract is 07700 900123",
        "mi teléfono de la solicitud es 612 345 678",
    ],
)
def test_a_phone_said_beside_a_word_for_a_case_stays_a_phone(said: str) -> None:
    """A customer's phone stays a phone (scoped `verified`), whatever word for a contract
    or a request is said near it."""
    facts = [f for f in extract(said) if f.tags[0] in ("phone", "order")]
    assert [(f.tags[0], f.scope) for f in facts] == [("phone", "verified")], facts


def test_the_problem_is_the_first_message_that_states_one() -> None:
    chat = [
        "oi boa tarde",
        "sou a Ana Souza",
        "meu pedido não chegou ainda e já faz 10 dias",
        "o código de rastreio não funciona",
    ]
    problems = [f for f in extract(*chat) if f.tags[0] == "problem"]
    assert [f.value for f in problems] == ["meu pedido não chegou ainda e já faz 10 dias"]


@pytest.mark.parametrize(
    ("chat", "problem"),
    [
        (
            ["Hello", "Hi, I'm Ana from Austin. I received the wrong size of shoes."],
            "I received the wrong size of shoes",
        ),
        (
            ["hola buenas", "quería saber por qué me cobraron dos veces"],
            "quería saber por qué me cobraron dos veces",
        ),
        (
            ["oi tudo bem? preciso de ajuda. a fatura veio com valor errado"],
            "a fatura veio com valor errado",
        ),
        (
            ["Good morning, this is John Smith and my refund never arrived."],
            "my refund never arrived",
        ),
        # "there" of "there's" is no greeting
        (
            ["hey this is Megan. there's a charge I didn't authorize"],
            "there's a charge I didn't authorize",
        ),
        # chat openers, and who the customer is in the forms a chat says it
        (
            [
                "hi there, anyone around?, u can call me Michael. "
                "quick one I don't recognize this charge"
            ],
            "I don't recognize this charge",
        ),
        (
            [
                "Hello, anyone around?, name is Megan Johnson. "
                "I have a problem: tracking hasn't moved"
            ],
            "tracking hasn't moved",
        ),
        (
            ["hello it's David Moore. here's the thing you billed me twice"],
            "you billed me twice",
        ),
        (
            ["alô, João Ferreira aqui. preciso resolver uma coisa, o app não deixa eu entrar"],
            "o app não deixa eu entrar",
        ),
        (
            [
                "boa tarde pessoal Camila Rodrigues aqui "
                "preciso resolver uma coisa, o rastreio parou"
            ],
            "o rastreio parou",
        ),
        (
            ["ei entao apareceu a cobrança em dobro no cartão"],
            "apareceu a cobrança em dobro no cartão",
        ),
        # a greeting misspelt still leads an introduction, which is not the problem
        (
            ["olá boa trade aqui quem fala é Beatriz queria saber se tem esse produto em estoque"],
            "queria saber se tem esse produto em estoque",
        ),
        # but a problem stated first keeps the introduction that follows it
        (
            ["meu pedido não chegou, sou de Recife e preciso dele"],
            "meu pedido não chegou, sou de Recife e preciso dele",
        ),
        (
            ["Reembolso urgente, meu nome é Ana e paguei duas vezes o mesmo pedido"],
            "Reembolso urgente, meu nome é Ana e paguei duas vezes o mesmo pedido",
        ),
    ],
)
def test_the_problem_skips_greetings_and_introductions(chat: list[str], problem: str) -> None:
    problems = [f.value for f in extract(*chat) if f.tags[0] == "problem"]
    assert problems == [problem]


@pytest.mark.parametrize(
    ("chat", "problem"),
    [
        (
            ["oi boa noite tipo então pode me chamar de Carlos Ferreira, o pedido veio sem tampa"],
            "o pedido veio sem tampa",
        ),
        (
            ["hi there, quick one, you can call me Kevin Miller. my refund never showed up"],
            "my refund never showed up",
        ),
        (
            ["hola buenas, bueno, me llamo Lucía y me cobraron dos veces el envío"],
            "me cobraron dos veces el envío",
        ),
        (
            ["aqui é a Ana, preciso de ajuda, meu cartão foi recusado na compra"],
            "meu cartão foi recusado na compra",
        ),
        (
            ["this is John, I need some help, the app keeps crashing when I log in"],
            "the app keeps crashing when I log in",
        ),
        (
            ["quem fala é o Marcos, preciso resolver uma coisa: a fatura veio errada"],
            "a fatura veio errada",
        ),
        (["hola, necesito ayuda, no me llegó el pedido"], "no me llegó el pedido"),
        (["hola, tengo un problema. La lavadora no enciende"], "La lavadora no enciende"),
        (["so anyway my package is stuck in customs"], "my package is stuck in customs"),
        (["bueno, es que mi pedido no llegó"], "mi pedido no llegó"),
        (
            ["sou a Ana, cliente de vocês, e preciso de ajuda, minha conta foi bloqueada"],
            "minha conta foi bloqueada",
        ),
        # A request for help with something says what it is about
        (
            ["preciso de ajuda com meu pedido que não chegou"],
            "preciso de ajuda com meu pedido que não chegou",
        ),
        (
            ["I need some help with my order that never arrived"],
            "I need some help with my order that never arrived",
        ),
        (
            ["tengo un problema con la factura de octubre"],
            "tengo un problema con la factura de octubre",
        ),
        # A message that is only preamble leaves the problem to the next one
        (
            ["oi boa noite, preciso de ajuda", "a geladeira chegou amassada"],
            "a geladeira chegou amassada",
        ),
        (
            ["hi there, this is John. I need some help", "my card was charged twice"],
            "my card was charged twice",
        ),
        (
            ["buenas noches, me llamo Lucía Pérez, tengo un problema", "la lavadora llegó rota"],
            "la lavadora llegó rota",
        ),
        (["oi, preciso resolver uma coisa", "o boleto venceu ontem"], "o boleto venceu ontem"),
        (["the delivery to Austin never happened"], "the delivery to Austin never happened"),
        (["tipo assim, meu pedido sumiu"], "meu pedido sumiu"),
        (
            ["preciso de ajuda, por favor, é urgente, meu nome saiu errado na nota"],
            "meu nome saiu errado na nota",
        ),
        (["so so sorry to bother, my card was declined"], "my card was declined"),
        (["tenho uma dúvida: posso trocar por outro modelo?"], "posso trocar por outro modelo"),
    ],
)
def test_the_problem_is_what_the_customer_came_for(chat: list[str], problem: str) -> None:
    problems = [f.value for f in extract(*chat) if f.tags[0] == "problem"]
    assert problems == [problem]
    assert len(problem.split()) <= 18


@pytest.mark.parametrize(
    "text",
    [
        "oi boa noite, preciso de ajuda",
        "hi there, I need some help please",
        "hola buenas, me llamo Lucía",
        "bom dia, aqui é a Ana, tenho uma dúvida",
        "hello, can you help me?",
        "hola, necesito ayuda urgente",
        "I'm so sorry to bother you",
        "oi, tudo bem? preciso de ajuda, por favor",
    ],
)
def test_a_message_of_preamble_only_states_no_problem(text: str) -> None:
    assert "problem" not in kinds(extract(text))


# Phone transcripts and chat without punctuation: greetings, the customer's name and a
# request for help run straight into the problem, and on past it into another subject.
@pytest.mark.parametrize(
    ("chat", "problem"),
    [
        (
            [
                "boa noite tipo preciso de ajuda pode me chamar de carlos ferreira preciso "
                "resolver uma coisa queria saber se tem esse produto em estoque e outra coisa "
                "comprei pelo aplicativo"
            ],
            "queria saber se tem esse produto em estoque",
        ),
        (
            ["oi bom dia me chamo juliana preciso de ajuda o boleto veio com o valor errado"],
            "o boleto veio com o valor errado",
        ),
        (
            ["oi tudo bem aqui é a fernanda tenho uma dúvida vocês entregam no sábado"],
            "vocês entregam no sábado",
        ),
        (
            [
                "bom dia quem fala é o roberto preciso de ajuda minha encomenda está parada há "
                "uma semana e outra coisa o rastreio não atualiza"
            ],
            "minha encomenda está parada há uma semana",
        ),
        (
            [
                "aqui é o joão preciso resolver uma coisa a entrega atrasou e aí outra coisa o "
                "cupom não funcionou"
            ],
            "a entrega atrasou",
        ),
        (
            ["quem fala é a patrícia tenho um problema o cartão foi recusado duas vezes"],
            "o cartão foi recusado duas vezes",
        ),
        (
            ["me chamo carlos comprei um celular e veio sem carregador"],
            "comprei um celular e veio sem carregador",
        ),
        (
            [
                "hi there quick one my name is kevin miller I need some help do you still sell "
                "that model I called yesterday"
            ],
            "do you still sell that model I called yesterday",
        ),
        (
            ["hello this is sarah I have a question can I return shoes I already wore once"],
            "can I return shoes I already wore once",
        ),
        (
            [
                "hey you can call me mike I need some help my subscription renewed without "
                "asking and another thing the app logs me out"
            ],
            "my subscription renewed without asking",
        ),
        (
            [
                "good evening my name is anna lee quick one my package says delivered but "
                "nothing is here anyway thanks"
            ],
            "my package says delivered but nothing is here",
        ),
        (
            ["you can call me joe I have a question does the warranty cover water damage"],
            "does the warranty cover water damage",
        ),
        (
            [
                "hola buenas tardes me llamo lucía pérez necesito ayuda con algo el paquete "
                "llegó roto"
            ],
            "el paquete llegó roto",
        ),
        (["hola soy marta tengo una pregunta hacen envíos a canarias"], "hacen envíos a canarias"),
        (
            [
                "buenas noches me llamo diego ramírez necesito ayuda el cargo aparece dos veces en "
                "mi tarjeta y otra cosa no recibí la factura"
            ],
            "el cargo aparece dos veces en mi tarjeta",
        ),
        (["soy pablo necesito ayuda mi pedido no llegó"], "mi pedido no llegó"),
        # The same, punctuated
        (
            [
                "Boa noite! Pode me chamar de Carlos. Preciso de ajuda. Queria saber se tem esse "
                "produto em estoque."
            ],
            "Queria saber se tem esse produto em estoque",
        ),
        (
            ["hi, my name is Kevin. I need some help: do you still sell that model?"],
            "do you still sell that model",
        ),
        (
            ["Hola, me llamo Diego. Tengo una pregunta: ¿hacen envíos a Canarias?"],
            "hacen envíos a Canarias",
        ),
        # A message of preamble only, unpunctuated, leaves the problem to the next one
        (
            ["oi boa noite me chamo juliana preciso de ajuda", "o boleto veio errado"],
            "o boleto veio errado",
        ),
        # "preciso" with what it is about, or a request for help with something, stays whole
        (
            ["olá aqui é o paulo henrique preciso trocar o tamanho da camiseta"],
            "preciso trocar o tamanho da camiseta",
        ),
        (
            ["preciso trocar o tamanho da camiseta que comprei ontem"],
            "preciso trocar o tamanho da camiseta que comprei ontem",
        ),
        (
            ["buen día soy ana tengo un problema con la factura de octubre"],
            "tengo un problema con la factura de octubre",
        ),
        (
            ["hi I have a question about my last invoice"],
            "I have a question about my last invoice",
        ),
        (
            ["oi preciso de ajuda pra cancelar minha assinatura"],
            "preciso de ajuda pra cancelar minha assinatura",
        ),
        (
            ["hola tengo una pregunta sobre la garantía del televisor"],
            "tengo una pregunta sobre la garantía del televisor",
        ),
        # A change of subject ends the problem
        (
            ["my order arrived broken and the box was wet anyway can you send a new one"],
            "my order arrived broken and the box was wet",
        ),
        (
            ["el microondas no calienta y otra cosa la puerta no cierra bien"],
            "el microondas no calienta",
        ),
        # "aí" telling what happened next is the same problem, not another subject
        (
            ["comprei um celular pelo site aí veio com a tela trincada"],
            "comprei um celular pelo site aí veio com a tela trincada",
        ),
    ],
)
def test_an_unpunctuated_problem_starts_past_the_preamble(chat: list[str], problem: str) -> None:
    problems = [f.value for f in extract(*chat) if f.tags[0] == "problem"]
    assert problems == [problem]
    assert problem in " ".join(chat)


@pytest.mark.parametrize(
    "text",
    [
        "hi my name is kevin miller",
        "hola buenas me llamo lucía pérez",
        "oi boa noite pode me chamar de carlos ferreira",
        "oi boa tarde me chamo renata preciso de ajuda por favor",
        "hola soy marta necesito ayuda con algo",
        "hey this is dan quick one I need some help",
        "bom dia aqui é a ana tenho uma dúvida",
    ],
)
def test_an_unpunctuated_message_of_preamble_only_states_no_problem(text: str) -> None:
    assert "problem" not in kinds(extract(text))


@pytest.mark.parametrize(
    ("chat", "kind", "value"),
    [
        # cues said one after the other: the value follows the last
        (["moro em Curitiba", "desculpa errei o certo é Porto"], "city", "Porto"),
        (["meu nome é João", "desculpa, errei: o certo é João Pereira"], "name", "João Pereira"),
        # the fewest words the value can be: a slip follows it
        (["sou de Recife", "na verdade é Campinas digitei errado. obrigado"], "city", "Campinas"),
        # no word says which: a city's name is the city (GeoNames), else the name
        (["tô em Porto Alegre", "me chamo Carlos", "foi mal o correto é Goiânia"],
         "city", "Goiânia"),
        (["sou de Recife, me chamo Ana", "na verdade é Mariana digitei errado"], "name", "Mariana"),
        # ... also when the value it corrects was said in words no cue knew
        (["me chamo Ana", "desculpa, errei: o certo é Florianópolis"], "city", "Florianópolis"),
        (["olá, tudo bem?", "foi mal, o correto é Beatriz Pereira"], "name", "Beatriz Pereira"),
        # a name run on into the turn after a cue that says a value was wrong
        (["oi", "desculpa errei o certo é Thiago Costa liguei ontem"], "name", "Thiago Costa"),
        (["oi", "foi mal o correto e Pedro Araújo n quero cancelar"], "name", "Pedro Araújo"),
        (["hi", "sorry my mistake it's actually Emily Anderson"], "name", "Emily Anderson"),
    ],
)  # fmt: skip
def test_a_bare_correction_finds_its_value_and_kind(chat: list[str], kind: str, value: str) -> None:
    current = [f.value for f in current_facts(extract(*chat)) if f.tags[0] == kind]
    assert current == [value]


def test_an_amount_said_in_two_parts_is_not_a_bare_code() -> None:
    facts = current_facts(extract("o produto é SKU-MV81-65", "desculpa errei o certo é 65 e 50"))
    assert [f.value for f in facts if f.tags[0] == "sku"] == ["SKU-MV81-65"]


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("el paquete se envió a Bogotá pero yo vivo en Cali", "Cali"),
        ("sou de São Paulo mas moro em Campinas", "Campinas"),
        ("ship it to Leeds, I live in York now", "York"),
    ],
)
def test_the_last_city_a_message_states_is_the_current_one(text: str, city: str) -> None:
    assert [f.value for f in current_facts(extract(text)) if f.tags[0] == "city"] == [city]


@pytest.mark.parametrize(
    "chat",
    [
        ["I live in York", "no, the right one is Leeds"],
        ["correction danderson at hotmail dot com and then I need the refund"],
        ["my email is dan at gmail dot com", "correction danderson at hotmail dot com and then"],
        ["me enganei, o pedido é 774412 e não o outro"],
        ["my email is dan@shop.com", "actually dan@shop.co.uk and please update it"],
        ["vivo en Sevilla", "perdón, quise decir Valencia"],
    ],
)
def test_a_correction_is_not_the_problem(chat: list[str]) -> None:
    assert "problem" not in kinds(extract(*chat))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        # Only the clause that corrects is skipped
        (
            "correction danderson at hotmail dot com, and my refund never arrived",
            "my refund never arrived",
        ),
        # "Actually" opening a first message corrects nothing before it
        ("Actually, my order 55123 never arrived", "my order 55123 never arrived"),
        ("na verdade o produto veio quebrado", "na verdade o produto veio quebrado"),
    ],
)
def test_a_problem_after_a_correction_cue_is_still_the_problem(text: str, problem: str) -> None:
    assert [f.value for f in extract(text) if f.tags[0] == "problem"] == [problem]


@pytest.mark.parametrize(
    "text",
    [
        "moro em {}",
        "I live in {}",
        "sou de {}",
        "vivo en {}",
        "ship it to {}",
        "the delivery to {} never happened",
        "envío a {} tarda mucho",
        "estou em {} agora",
    ],
)
@pytest.mark.parametrize(
    "city",
    [
        "Vila Velha",
        "Vila Mariana",
        "Porto Seguro",
        "Santa Maria",
        "San José",
        "Belo Horizonte",
        "Rio de Janeiro",
        "São José dos Campos",
    ],
)
def test_a_city_of_several_words_comes_out_whole(text: str, city: str) -> None:
    for said in (city, city.lower()):
        facts = extract(text.format(said))
        assert [f.value for f in facts if f.tags[0] == "city"] == [said]


def test_a_city_in_lowercase_keeps_a_third_word_that_says_city() -> None:
    facts = extract("we ship to new york city every week")
    assert [f.value for f in facts if f.tags[0] == "city"] == ["new york city"]


def test_the_problem_skips_a_sentence_that_says_only_who_the_customer_is() -> None:
    text = (
        "Boa tarde! Me chamo Renata e sou cliente há 5 anos. Estou com um problema na "
        "minha fatura de outubro que veio com cobrança duplicada."
    )
    facts = extract(text)
    assert ("name", "Renata") in pairs(facts)
    assert [f.value for f in facts if f.tags[0] == "problem"] == [
        "Estou com um problema na minha fatura de outubro que veio com cobrança duplicada"
    ]


def test_a_long_problem_is_a_short_contiguous_span() -> None:
    text = (
        "bom dia comprei uma cafeteira no site e quando abri a caixa ela estava toda amassada "
        "e o cabo solto e a nota fiscal nem veio junto e eu preciso dela pro trabalho"
    )
    (problem,) = (f for f in extract(text) if f.tags[0] == "problem")
    assert problem.value in text
    assert problem.value.startswith("comprei uma cafeteira")
    assert len(problem.value.split()) <= 18


def test_a_long_formal_sentence_is_cut_at_a_comma() -> None:
    text = (
        "Prezados,\n\nVenho por meio deste solicitar o reembolso do pedido nº 784512, no valor "
        "de R$ 1.249,90, pago em 02/03/2025.\n\nAtenciosamente,\nRoberto Albuquerque"
    )
    facts = extract(text)
    assert {
        (
            "problem",
            "Venho por meio deste solicitar o reembolso do pedido nº 784512, no valor de "
            "R$ 1.249,90",
        ),
        ("order", "784512"),
        ("amount", "R$ 1.249,90"),
        ("date", "02/03/2025"),
        ("name", "Roberto Albuquerque"),
    } <= pairs(facts)


def test_a_clearly_new_problem_is_a_second_problem() -> None:
    chat = [
        "my order 55123 arrived broken",
        "thanks for checking",
        "another issue: I was charged twice for the shipping",
        "otra cosa, la factura vino con el nombre equivocado",
    ]
    problems = [f.value for f in extract(*chat) if f.tags[0] == "problem"]
    assert problems == [
        "my order 55123 arrived broken",
        "I was charged twice for the shipping",
        "la factura vino con el nombre equivocado",
    ]


@pytest.mark.parametrize(
    ("chat", "kind", "old", "new"),
    [
        (["I live in Austin", "scratch that, Dallas"], "city", "Austin", "Dallas"),
        (["moro em Recife", "na verdade é Niterói, não Recife"], "city", "Recife", "Niterói"),
        (["vivo en Sevilla", "perdón, quise decir Valencia"], "city", "Sevilla", "Valencia"),
        (["my name is Jon", "sorry, I mean John"], "name", "Jon", "John"),
        (["my order is 55123", "sorry, my mistake: it's 55132"], "order", "55123", "55132"),
        (["o pedido é 774411", "me enganei, é 774412"], "order", "774411", "774412"),
        (["paguei R$ 50,00", "na verdade foi R$ 55,00"], "amount", "R$ 50,00", "R$ 55,00"),
        (["I live in Denver", "Actually, it's Boulder"], "city", "Denver", "Boulder"),
        (["my name is Jon", "correction: John"], "name", "Jon", "John"),
        (
            ["meu cel é (11) 91234-5678", "quer dizer, (11) 91234-5679"],
            "phone",
            "(11) 91234-5678",
            "(11) 91234-5679",
        ),
        (["el pedido es 55123", "en realidad es 55321"], "order", "55123", "55321"),
        (["o pedido é 889900", "espera, é 889901"], "order", "889900", "889901"),
        (["moro em Lisboa", "não, o correto é Porto"], "city", "Lisboa", "Porto"),
        (["I live in York", "no, the right one is Leeds"], "city", "York", "Leeds"),
        (["vivo en Toledo", "no, lo correcto es Segovia"], "city", "Toledo", "Segovia"),
        (["ship it to Leeds", "sorry, it should be Bristol"], "city", "Leeds", "Bristol"),
    ],
)
def test_a_correction_supersedes_the_value_it_corrects(
    chat: list[str], kind: str, old: str, new: str
) -> None:
    facts = extract(*chat)
    corrected = [f for f in facts if f.tags[0] == kind and f.value == new]
    assert corrected and corrected[0].text.endswith("(correction)")
    values = [f.value for f in current_facts(facts) if f.tags[0] == kind]
    assert values == [new]
    assert old not in values


def test_a_first_name_in_a_later_conversation_keeps_the_full_name() -> None:
    """The customer's facts hold "Siobhan Marsh" from last week's call; today's chat is
    signed "Siobhan": the same person, the full name stays. A correction still wins."""
    before = extract("hi, this is Siobhan Marsh")
    signed = turns("Any news?\n\nBest wishes,\nSiobhan")
    later = extract_people_facts(signed, "webchat", NOW + 86400)
    assert [f.value for f in merged_facts(before, later) if f.tags[0] == "name"] == [
        "Siobhan Marsh"
    ]
    fixed = extract_people_facts(
        turns("sorry, the right name is Siobhan Marsh-Whitcomb"), "webchat", NOW + 86400
    )
    names = [f.value for f in merged_facts(before, fixed) if f.tags[0] == "name"]
    assert names == ["Siobhan Marsh-Whitcomb"], names


def test_a_correction_inside_one_message_keeps_the_second_value() -> None:
    facts = extract("my order is 55123, sorry I mean 55132")
    assert [f.value for f in current_facts(facts) if f.tags[0] == "order"] == ["55132"]


def test_actually_before_another_value_corrects_nothing() -> None:
    facts = extract("order 55123 is late", "Actually, I have another order 66234")
    orders = [f.value for f in current_facts(facts) if f.tags[0] == "order"]
    assert orders == ["55123", "66234"]


@pytest.mark.parametrize(
    ("chat", "kind", "old", "new"),
    [
        (
            ["Te devolvo R$ 30,00 no cartão.", "Me enganei antes, o correto é 34,00 reais."],
            "promise",
            "R$ 30,00",
            "34,00 reais",
        ),
        (
            ["I can refund $150.", "Sorry, I misspoke earlier: USD 187.50."],
            "promise",
            "$150",
            "USD 187.50",
        ),
        (
            [
                "I'll credit you thirty dollars.",
                "correction it's actually thirty-three dollars and fifty cents",
            ],
            "promise",
            "thirty dollars",
            "thirty-three dollars and fifty cents",
        ),
        (
            ["Le reembolsamos 40 euros.", "Perdón, me equivoqué: son 45 euros."],
            "promise",
            "40 euros",
            "45 euros",
        ),
        (
            ["Vou estornar R$ 30,00.", "Correção: na verdade R$ 31,90."],
            "promise",
            "R$ 30,00",
            "R$ 31,90",
        ),
        (["Te devolvemos 30 euros.", "Perdón, es 35 euros."], "promise", "30 euros", "35 euros"),
        # The agent promised before: any first amount in the cue's sentence restates it
        (
            ["I can refund $150.", "Sorry, my mistake, the full amount we'll send is $175."],
            "promise",
            "$150",
            "$175",
        ),
        (
            ["We'll ship it by july six.", "sorry I misspoke earlier july eight"],
            "deadline",
            "by july six",
            "july eight",
        ),
        (
            ["Consigo devolver até 20/02.", "Correção: na verdade 21/02"],
            "deadline",
            "até 20/02",
            "21/02",
        ),
        (
            ["Le llegará antes del viernes.", "Perdón, me equivoqué: el plazo es el 3 de mayo."],
            "deadline",
            "antes del viernes",
            "3 de mayo",
        ),
        # a call's run-on transcript: "corrijo" mid-sentence, a filler before the value
        (
            [
                "le devolvemos cien euros",
                "déjeme revisar el historial corrijo en realidad es treinta y nueve euros "
                "con ochenta céntimos puede confirmarme",
            ],
            "promise",
            "cien euros",
            "treinta y nueve euros con ochenta céntimos",
        ),
        (
            [
                "vou devolver quarenta e quatro reais",
                "certo me enganei antes o correto né é setenta e sete reais para resolver",
            ],
            "promise",
            "quarenta e quatro reais",
            "setenta e sete reais",
        ),
        # a date keeps the "dia" it was said with
        (
            [
                "deve chegar até dia dezoito de agosto tudo certo até aqui",
                "vou consultar o sistema só um instante correção na verdade dia treze de agosto "
                "tem mais alguma coisa",
            ],
            "deadline",
            "até dia dezoito de agosto",
            "dia treze de agosto",
        ),
        # the cue that restates is read past one opening the reply that restates nothing
        (
            [
                "Le abonamos 30 euros.",
                "No es lo que queremos, disculpe. Perdón, me equivoqué antes: 45,99 euros.",
            ],
            "promise",
            "30 euros",
            "45,99 euros",
        ),
        # a filler between the cue and the value
        (
            [
                "debería estar resuelto para el tres de julio",
                "deme un minuto corrijo en realidad es o sea el treinta de junio le explico",
            ],
            "deadline",
            "para el tres de julio",
            "treinta de junio",
        ),
        # a filler inside the cue
        (
            ["we can refund forty dollars", "sorry uh i misspoke earlier fifty dollars back"],
            "promise",
            "forty dollars",
            "fifty dollars",
        ),
    ],
)
def test_an_agent_correcting_an_amount_or_date_supersedes_its_promise(
    chat: list[str], kind: str, old: str, new: str
) -> None:
    facts = extract(*chat, role="assistant")
    (corrected,) = (f for f in facts if f.value == new)
    assert corrected.tags == (kind, "agent", "correction")
    assert corrected.text.endswith("(the agent said) (correction)")
    assert [f.value for f in current_facts(facts) if f.tags[0] == kind] == [new]
    assert old in {f.value for f in facts}


@pytest.mark.parametrize(
    ("chat", "kind", "values"),
    [
        (
            [
                "Consigo devolver até 20/10.",
                "Me enganei antes, o correto é dia 27/10, e o estorno cai em até dez dias úteis.",
            ],
            "deadline",
            ["dia 27/10", "em até dez dias úteis"],
        ),
        (
            ["I can refund $150.", "Sorry, I misspoke earlier: USD 187.50, plus a $10 voucher."],
            "promise",
            ["USD 187.50", "$10"],
        ),
    ],
)
def test_an_agent_correction_supersedes_with_its_first_value_only(
    chat: list[str], kind: str, values: list[str]
) -> None:
    facts = extract(*chat, role="assistant")
    assert [f.value for f in current_facts(facts) if f.tags[0] == kind] == values
    assert [f.value for f in facts if "correction" in f.tags] == values[:1]


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("Sorry, I misspoke earlier: USD 187.50.", "USD 187.50"),
        ("Me enganei antes. O correto é 34,00 reais.", "34,00 reais"),
        ("Oops, my mistake, July 8th is when it ships.", "July 8th"),
        ("Correção: o prazo certo é 25/03.", "25/03"),
    ],
)
def test_an_agent_correction_right_before_a_value_states_it(said: str, value: str) -> None:
    (fact,) = extract(said, role="assistant")
    assert fact.value == value and "correction" in fact.tags


@pytest.mark.parametrize(
    "said",
    [
        "Sorry, my mistake, I meant the other order. Your total was $50.",
        "Actually, your order total was $50.",
        "Sorry, I misspoke earlier: the store opens at 9.",
        "Correction: your order shipped. It was placed March 3.",
    ],
)
def test_an_agent_correction_that_restates_no_value_states_none(said: str) -> None:
    assert extract(said, role="assistant") == []


@pytest.mark.parametrize(
    ("chat", "values"),
    [
        # An apology is no correction; "also" adds a second promise
        (
            ["Le reembolsamos 40 euros.", "Perdón por la demora, le reembolsamos 45 euros."],
            ["40 euros", "45 euros"],
        ),
        (["I can refund $150.", "Actually, I can also add a $10 voucher."], ["$150", "$10"]),
        (
            ["We'll ship it by Friday.", "Correction: your order shipped. It was placed March 3."],
            ["by Friday"],
        ),
    ],
)
def test_an_agent_turn_that_corrects_nothing_keeps_its_promises(
    chat: list[str], values: list[str]
) -> None:
    facts = extract(*chat, role="assistant")
    assert [f.value for f in current_facts(facts)] == values
    assert not any("correction" in f.tags for f in facts)


def test_a_customer_correcting_an_amount_states_no_promise() -> None:
    facts = extract("paguei US$ 150", "Sorry, I misspoke earlier: USD 187.50.")
    assert [(f.tags, f.value) for f in current_facts(facts) if f.tags[0] != "problem"] == [
        (("amount", "customer", "correction"), "USD 187.50")
    ]


def test_actually_in_the_middle_of_a_sentence_corrects_nothing() -> None:
    facts = extract("order 55123 is late", "I actually have a second order 66234 too")
    orders = [f.value for f in current_facts(facts) if f.tags[0] == "order"]
    assert orders == ["55123", "66234"]


def fact(kind: str, value: str, at: float, *extra: str) -> Fact:
    return Fact(
        id=f"{kind}:{value}",
        text=f"{kind}: {value}",
        tags=(kind, *extra),
        created_at=at,
        value=value,
        extracted=True,
    )


def test_current_facts_keeps_the_newest_of_a_single_valued_kind() -> None:
    facts = [fact("name", "Ana", 1), fact("city", "Recife", 2), fact("name", "Bia", 3)]
    assert [f.value for f in current_facts(facts)] == ["Recife", "Bia"]


def test_current_facts_keeps_a_few_of_a_multi_valued_kind() -> None:
    facts = [fact("order", str(n), n) for n in range(1, 8)]
    kept = current_facts(facts)
    assert [f.value for f in kept] == [str(n) for n in range(8 - KEEP_PER_KIND, 8)]


def test_current_facts_drops_what_a_correction_replaced() -> None:
    facts = [
        fact("order", "111", 1),
        fact("order", "222", 2),
        fact("order", "223", 3, "customer", "correction"),
    ]
    assert [f.value for f in current_facts(facts)] == ["111", "223"]


def test_current_facts_passes_other_facts_and_reorders_restated_ones() -> None:
    other = Fact(id="app", text="plan: gold", created_at=0.5)
    facts = [fact("order", "1", 1), other, fact("order", "2", 2), fact("order", "1", 3)]
    assert [f.id for f in current_facts(facts)] == ["app", "order:2", "order:1"]
    # The app's own fact of a known kind is never pruned by what a customer says.
    put = Fact(id="crm", text="name: Annabel", tags=("name",), confirmed=True, value="Annabel")
    said = fact("name", "Ann", 9)
    assert [f.id for f in current_facts([put, said])] == ["crm", "name:Ann"]


CHATTER = [
    "ok",
    "obrigado",
    "kkkk",
    "sim",
    "pode ser",
    "hmm",
    "entendi",
    "tá bom",
    "perfect thanks",
    "I'm waiting",
    "still here",
    "sure",
    "yes please",
    "no problem",
    "vale",
    "de acuerdo",
    "gracias",
    "ok ok",
    "👍",
    "?",
    "alô?",
    "hello?",
    "are you there?",
    "sigo aquí",
    "estou aguardando",
    "ok vou aguardar então",
    "lol",
    "i'm so tired of this",
    "beleza, valeu",
    "perfecto, gracias",
]


def test_chatter_gives_few_facts() -> None:
    assert len(CHATTER) == 30
    assert len(extract(*CHATTER)) <= 2


@pytest.mark.parametrize(
    ("words", "digits"),
    [
        ("nove um dois", "912"),
        ("nine one two three", "9123"),
        ("five five five oh one", "55501"),
        ("double five", "55"),
        ("one hundred five", "105"),
        ("one hundred and five", "105"),
        ("cento e cinco", "105"),
        ("ciento cinco", "105"),
        ("dois mil e quinhentos", "2500"),
        ("twenty-eight", "28"),
        ("vinte e oito", "28"),
        ("veintiocho", "28"),
        ("nine one twenty three", "9123"),
        ("seis meia nove", "669"),
        ("dezesseis", "16"),
        ("cero uno dos", "012"),
    ],
)
def test_spelled_numbers_become_digits(words: str, digits: str) -> None:
    assert spelled_number(words) == digits


def test_spelled_number_rejects_words_that_are_not_numbers() -> None:
    assert spelled_number("the blue one") is None
    assert spelled_number("") is None
    assert spelled_number("um dois", english=True) == "2"  # "um" is a hesitation in English


@pytest.mark.parametrize(
    ("said", "english", "digits"),
    [
        ("(415) 555-0199", True, "4155550199"),
        ("415 555 zero one nine nine", True, "4155550199"),
        ("four one five, five five five, zero one nine nine", True, "4155550199"),
        ("Quatro um cinco e cinco", False, "4155"),
        ("quatro um cinco", True, "45"),  # "um" a hesitation in English
        ("five five five oh one double nine", True, "5550199"),
        ("siete siete cero cero, uno dos tres", False, "7700123"),
        ("três três", False, "33"),
        ("room one hundred, four one five", True, "100415"),  # a part between commas alone
        ("cuatro-uno-cinco uh cinco", False, "4155"),
    ],
)
def test_a_number_in_digits_and_words_says_its_digits(
    said: str, english: bool, digits: str
) -> None:
    assert said_digits(said, english) == digits


def test_a_pasted_wall_of_text_is_read_only_in_part() -> None:
    wall = "meu pedido 123456 " * 5000
    facts = extract(wall)
    assert 0 < len(facts) < 10


def test_a_very_long_history_is_read_at_its_ends() -> None:
    chatter = ["ok, still waiting on that " + "x" * 200] * 600
    facts = extract("meu nome é Júlia", *chatter, "order ORD-77123 please")
    assert {("name", "Júlia"), ("order", "ORD-77123")} <= pairs(facts)


def test_known_facts_let_a_later_call_know_what_a_bare_correction_corrects() -> None:
    earlier = extract_people_facts(
        [{"role": "assistant", "content": "I can offer $40.00 as a refund."}], "chat", NOW
    )
    later = extract_people_facts(
        [{"role": "assistant", "content": "correction it is actually forty-three dollars"}],
        "chat",
        NOW + 60,
        earlier,
    )
    (fact,) = [f for f in later if f.tags[0] == "promise"]
    assert fact.value == "forty-three dollars" and "correction" in fact.tags
    kept = current_facts([*earlier, *later])
    assert [f.value for f in kept if f.tags[0] == "promise"] == ["forty-three dollars"]
    problem = extract_people_facts(
        [{"role": "user", "content": "my parcel never arrived"}], "chat", NOW
    )
    again = extract_people_facts(
        [{"role": "user", "content": "the box was also damaged on one side"}],
        "chat",
        NOW + 1,
        problem,
    )
    assert not [f for f in again if f.tags[0] == "problem"]


def test_foi_mal_opens_a_correction() -> None:
    before = extract_people_facts([{"role": "user", "content": "moro em Recife"}], "zap", NOW)
    after = extract_people_facts(
        [{"role": "user", "content": "foi mal o correto é Goiânia"}], "zap", NOW + 1, before
    )
    assert [(f.tags[0], f.value) for f in after] == [("city", "Goiânia")]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("my name is er John", "John"),
        ("my name is, erm, Paula Reis", "Paula Reis"),
        ("meu nome é hmm Cláudia", "Cláudia"),
        ("me llamo, eh, Tomás", "Tomás"),
        # Names that end like a verb in its -ing form
        ("sou o Fernando", "Fernando"),
        ("me llamo Orlando", "Orlando"),
        ("soy Armando Paredes", "Armando Paredes"),
        ("eu sou o Arlindo", "Arlindo"),
        ("my name is Sterling", "Sterling"),
        ("I'm Irving", "Irving"),
        ("my name is Xiaoming Wang", "Xiaoming Wang"),
    ],
)
def test_a_hesitation_before_a_name_is_not_part_of_it(text: str, name: str) -> None:
    assert [f.value for f in extract(text) if f.tags[0] == "name"] == [name]


@pytest.mark.parametrize(
    "text",
    [
        "my name is er",
        "I'm, uh",
        "sou um",
        "me llamo hmm",
        "Er, here",
        "i'm retomando",
        "meu nome é retomanfo",
        "sou Retomando o atendimento",
        "Continuando here, order 55123",
        "sou seguindo o que me falaram",
        "sou voltando",
        "I'm following up on my order",
        "This is Following up on the refund",
        "I'm Continuing",
        "soy siguiendo el caso",
        "soy Retomando",
        "Thanks,\nContinuing",
    ],
)
def test_a_filler_or_a_verb_is_not_a_name(text: str) -> None:
    assert "name" not in kinds(extract(text))


def test_a_verb_form_may_still_be_a_city() -> None:
    assert ("city", "Reading") in pairs(extract("I live in Reading"))


def run(*chat: str, role: str = "user") -> list[Fact]:
    """Each message its own call, told the facts heard before it, as a gateway reads."""
    facts: list[Fact] = []
    for n, text in enumerate(chat):
        message = [{"role": role, "content": text}]
        facts += extract_people_facts(message, "voice", NOW + n, facts)
    return facts


@pytest.mark.parametrize(
    ("chat", "kind", "value"),
    [
        # A false name no longer makes a bare correction a name
        (
            ["moro em Recife", "meu nome é retomando", "foi mal, o correto é Goiânia"],
            "city",
            "Goiânia",
        ),
        (["I live in Austin", "I'm er", "scratch that, Boston"], "city", "Boston"),
        # Without a cue word: whichever of name and city came last
        (["moro em Recife", "sou a Ana", "foi mal, o correto é Beatriz"], "name", "Beatriz"),
        (["my name is Ana", "I live in Austin", "scratch that, Boston"], "city", "Boston"),
        # A cue word in the correcting sentence says which
        (["moro em Recife", "sou a Ana", "na cidade, o correto é Goiânia"], "city", "Goiânia"),
        (["I live in Austin", "my name is Ana", "sorry i mean Boston, the city"], "city", "Boston"),
        (["sou a Ana", "moro em Recife", "o nome, o correto é Beatriz"], "name", "Beatriz"),
        (["my name is Ana", "I live in Austin", "the name, scratch that, Beth"], "name", "Beth"),
        # Unpunctuated chat: the value runs on into the rest of the turn.
        (
            ["I live in Denver", "scratch that boston and another thing i paid extra"],
            "city",
            "boston",
        ),
        (
            ["moro em Salvador", "vou viajar na verdade e Belo Horizonte digitei errado"],
            "city",
            "Belo Horizonte",
        ),
        (["moro em Recife", "na verdade é Olinda, tentei de novo e nada"], "city", "Olinda"),
        (["vivo en Toledo", "perdón es Segovia, sigo esperando"], "city", "Segovia"),
        # A denial, then the value; a request to correct.
        (
            ["hi I'm Lauren", "wait no it's Lauren Clarke, i tried the website"],
            "name",
            "Lauren Clarke",
        ),
        (
            ["soy Pablo", "no espera es pablo sánchez. y también no me llegó"],
            "name",
            "pablo sánchez",
        ),
        (["moro em Recife", "não, é Olinda"], "city", "Olinda"),
        (
            ["sou a Fernanda", "corrige aí por favor Fernanda Souza, to trabalhando"],
            "name",
            "Fernanda Souza",
        ),
        # A full name corrects the name it extends, whatever kind came last.
        (
            ["oi sou a Beatriz", "moro em Salvador", "foi mal, o correto é Beatriz Pereira"],
            "name",
            "Beatriz Pereira",
        ),
    ],
)
def test_a_bare_word_correction_takes_the_kind_its_sentence_or_the_last_fact_says(
    chat: list[str], kind: str, value: str
) -> None:
    facts = run(*chat)
    (corrected,) = [f for f in facts if f.value == value]
    assert corrected.tags == (kind, "customer", "correction")
    assert [f.value for f in current_facts(facts) if f.tags[0] == kind] == [value]


@pytest.mark.parametrize(
    ("chat", "value"),
    [
        (
            [
                "I can offer thirty dollars.",
                "i'm checking this with the team that handles it correction it's actually "
                "thirty-three dollars and fifty cents to speed things up",
            ],
            "thirty-three dollars and fifty cents",
        ),
        (
            ["let me review the full history correction it's actually forty-three dollars to fix"],
            "forty-three dollars",
        ),
        (
            ["vou ver aqui no sistema correção na verdade o valor é quarenta reais tá bom"],
            "quarenta reais",
        ),
        (["déjeme revisar corrección son 45 euros en total"], "45 euros"),
        (["deixa eu ver me enganei é 25/03 a entrega"], "25/03"),
    ],
)
def test_an_agent_correction_mid_sentence_restates_a_value(chat: list[str], value: str) -> None:
    facts = run(*chat, role="assistant")
    (corrected,) = [f for f in facts if f.value == value]
    assert "correction" in corrected.tags
    kind = corrected.tags[0]
    assert [f.value for f in current_facts(facts) if f.tags[0] == kind] == [value]


@pytest.mark.parametrize(
    "said",
    [
        "we'll make the correction in our system by friday",
        "the correction to your address was saved and the refund of $40 stands",
        "i sent the correcao request to billing and they owe you 30 reais",
    ],
)
def test_a_correction_word_mid_sentence_before_no_value_corrects_nothing(said: str) -> None:
    facts = run("I can refund $40.", said, role="assistant")
    assert not any("correction" in f.tags for f in facts)
    assert "$40" in [f.value for f in current_facts(facts) if f.tags[0] == "promise"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "boa boa noite preciso de ajuda aqui quem fala é thiago queria saber se tem esse "
            "produto em estoque e outra coisa comprei ontem",
            "queria saber se tem esse produto em estoque",
        ),
        ("bom bom dia o carregador veio sem o cabo", "o carregador veio sem o cabo"),
    ],
)
def test_a_stuttered_greeting_is_still_a_greeting(text: str, problem: str) -> None:
    found = extract_people_facts([{"role": "user", "content": text}], "zap", NOW)
    assert [f.value for f in found if f.tags[0] == "problem"] == [problem]


def test_should_be_after_a_slip_corrects_the_name() -> None:
    said = [{"role": "user", "content": "hi, this is Kevin Andersen"}]
    before = extract_people_facts(said, "chat", NOW)
    slip = [{"role": "user", "content": "oops, typo, should be Kevin Anderson"}]
    after = extract_people_facts(slip, "chat", NOW + 1, before)
    names = [f.value for f in after if f.tags[0] == "name"]
    assert names == ["Kevin Anderson"]


@pytest.mark.parametrize(
    "said",
    [
        "i mean Boston is lovely this time of year",  # no city heard yet: nothing to correct
        "na verdade eu queria saber do meu pedido",
    ],
)
def test_a_cue_mid_sentence_corrects_only_a_kind_already_heard(said: str) -> None:
    facts = run("oi, meu pedido atrasou", said)
    assert not any("correction" in f.tags for f in facts)


@pytest.mark.parametrize(
    ("chat", "kind", "value"),
    [
        # A weak cue, then a city the list knows, run on into the turn (a call's transcript)
        (
            ["i live in Houston", "hold on no it's phoenix and also my son paid for it"],
            "city",
            "phoenix",
        ),
        (
            ["moro em Natal", "não espera é são luís e outra coisa o boleto venceu"],
            "city",
            "são luís",
        ),
        # A strong cue said mid-sentence, and a later cue after an earlier one in passing
        (
            [
                "I live in Chicago",
                "the box was open but anyway scratch that dallas and like it was wet",
            ],
            "city",
            "dallas",
        ),
        (
            [
                "I live in Chicago",
                "i want to know what actually went wrong and correction miami and the box was torn",
            ],
            "city",
            "miami",
        ),
        # A denial run on mid-sentence, a capitalised city with no punctuation after it
        (
            ["I live in Chicago", "i paid for it twice wait no it's Seattle honestly what a mess"],
            "city",
            "Seattle",
        ),
        # A listed first name and a surname, lowercase, run on into the turn
        (
            ["my name is Kevin Hart", "ok so scratch that kevin brown and then the app froze"],
            "name",
            "kevin brown",
        ),
        (
            ["me llamo Lucía Gómez", "perdón es lucía navarro y otra cosa no llegó"],
            "name",
            "lucía navarro",
        ),
        # A bare value the fewest words cannot type, typed by the city list
        (["vivo en Lima", "perdón, el correcto es Buenos Aires"], "city", "Buenos Aires"),
        (["I live in Boston", "sorry my mistake it's actually Denver gracias"], "city", "Denver"),
    ],
)
def test_a_run_on_correction_is_read_where_a_list_names_the_value(
    chat: list[str], kind: str, value: str
) -> None:
    facts = run(*chat)
    assert [f.value for f in current_facts(facts) if f.tags[0] == kind] == [value]
    assert "correction" in next(f for f in facts if f.value == value).tags


@pytest.mark.parametrize(
    "said",
    [
        # no kind heard yet: a run-on guess makes none of its own
        "wait no it's phoenix and also my son paid for it",
        # a first name alone, or a full name someone else's, is not the customer's
        "no it's kevin who placed the order",
        "no it's Kevin Brown who placed the order",
        # no listed value after the cue
        "hold on no it's broken and also the app froze",
        "i wonder what actually happened and the box was torn",
    ],
)
def test_a_run_on_denial_without_a_listed_value_of_a_kind_heard_corrects_nothing(
    said: str,
) -> None:
    facts = run("hello", said)
    assert not any("correction" in f.tags for f in facts)
    facts = run("my name is Kevin Hart", said)
    assert [f.value for f in current_facts(facts) if f.tags[0] == "name"] == ["Kevin Hart"]


@pytest.mark.parametrize(
    "said",
    [
        # a brand or a person after a weak or mid-sentence cue, or a denial in passing
        "I ordered a jacket actually Nike sent the wrong size",
        "comprei um celular na verdade Samsung mandou outro",
        "Actually Amazon and FedEx both say it shipped",
        "Na verdade a Samsung e a loja não me respondem",
        "o aparelho não é Samsung, é Motorola",
        "el problema no es Correos, es la tienda",
        "no, es Juan el que recibe",
        "no it's Fedex that lost it",
        "I called yesterday and actually Kevin told me it shipped",
        "no it's fine thanks",
        "no it's not working again",
        "wait no it's broken again",
        "não é isso que eu pedi",
        "no, es que no me llegó",
    ],
)
def test_a_denial_before_no_name_or_place_corrects_nothing(said: str) -> None:
    facts = run("hi I'm Lauren", "I live in Leeds", said)
    assert not any("correction" in f.tags for f in facts)
    assert {f.tags[0]: f.value for f in current_facts(facts)}.get("city") == "Leeds"


def test_a_date_said_with_or_without_dia_is_one_fact() -> None:
    facts = run("comprei dia 16 de outubro", "foi em 16 de outubro mesmo")
    assert [f.value for f in current_facts(facts) if f.tags[0] == "date"] == ["16 de outubro"]


def test_money_in_slang_is_priced_in_its_currency() -> None:
    for text, key in (
        ("custou 50 paus", "BRL 50"),
        ("me cobraron 63 pavos", "EUR 63"),
        ("they charged me 35 pounds", "GBP 35"),
        ("me cobraron 12 libras", "GBP 12"),
    ):
        (amount,) = (f for f in extract(text) if f.tags[0] == "amount")
        assert _normal("amount", amount.value, False) == key


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("meu endereço é Travessa do Comércio, 2197, casa 2", "Travessa do Comércio, 2197, casa 2"),
        ("entrega na Rua das Flores 1919 apto 302 por favor", "Rua das Flores 1919 apto 302"),
        ("my address is 42 Oak Street, Apt 5, thanks", "42 Oak Street, Apt 5"),
        ("mi dirección es Calle Mayor 12, piso 3", "Calle Mayor 12, piso 3"),
        ("Rua Augusta 500 bloco B apto 12", "Rua Augusta 500 bloco B apto 12"),
        ("my address is Park Rd 637 Suite 525", "Park Rd 637 Suite 525"),
        (
            "é rua sete de setembro mil trezentos e quarenta e um bloco b apto 392",
            "rua sete de setembro mil trezentos e quarenta e um bloco b apto 392",
        ),
        # "casa" followed by no door number is no part of the address
        ("manda pra Rua Augusta 500 casa da minha mãe", "Rua Augusta 500"),
        # a call's transcript writes the door's letter in lowercase
        ("o sea es en calle real 382 piso 6 puerta b y entonces", "calle real 382 piso 6 puerta b"),
        # ... but a lone vowel is a word, not a door
        ("es calle mayor 12 piso 3 puerta a la derecha", "calle mayor 12 piso 3"),
        ("moro na rua das flores 12 casa e o portão é azul", "rua das flores 12"),
        # the door first, as in Britain and North America
        ("Moving to: Flat 3, 18 Cotham Grove, Bristol BS6 6AL", "Flat 3, 18 Cotham Grove"),
        ("send it to Apt 4B, 200 Main St please", "Apt 4B, 200 Main St"),
        # a street named after a king, its number said in words
        (
            "o endereço é rua dom pedro segundo mil cento e oitenta e sete casa dois",
            "rua dom pedro segundo mil cento e oitenta e sete casa dois",
        ),
        # Catalan streets, floor and door as ordinals; a floor said before its word
        (
            "Avinguda de Catalunya 47, 1º 1ª, 08172 Sant Cugat del Vallès",
            "Avinguda de Catalunya 47, 1º 1ª",
        ),
        ("carrer de Balmes 120, 3r 2a, Barcelona", "carrer de Balmes 120, 3r 2a"),
        ("it needs to be 40 Thames St, 2nd Floor, Portland ME 04101", "40 Thames St, 2nd Floor"),
    ],
)
def test_an_address_keeps_its_door(text: str, address: str) -> None:
    assert ("address", address) in pairs(extract(text))


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("hello it's David Moore. here's the thing", "David Moore"),
        ("Hi there, anyone around?, it's Ashley Miller. I was charged twice", "Ashley Miller"),
        ("Hello, name is Megan Johnson. tracking hasn't moved", "Megan Johnson"),
        ("alô, João Ferreira aqui. o app não abre", "João Ferreira"),
        ("boa tarde pessoal Camila Rodrigues aqui preciso resolver", "Camila Rodrigues"),
        ("oii aqui é thiago acabei de criar a conta", "thiago"),
    ],
)
def test_who_the_customer_is_in_a_chats_forms(text: str, name: str) -> None:
    assert [f.value for f in extract(text) if f.tags[0] == "name"] == [name]


@pytest.mark.parametrize(
    "text",
    ["oii aqui tá tudo parado", "hello it's broken again", "hi, it's been a week", "thanks\nbye"],
)
def test_a_greeting_or_its_is_no_name(text: str) -> None:
    assert [f.value for f in extract(text) if f.tags[0] == "name"] == []


@pytest.mark.parametrize(
    ("said", "role", "kind", "value"),
    [
        ("Consigo devolver 237 e 49 no seu cartão.", "assistant", "promise", "237 e 49"),
        ("Fica registrado o reembolso de 76 e 50.", "assistant", "promise", "76 e 50"),
        (
            "Le devolveremos 19 euros con 84 a su tarjeta.",
            "assistant",
            "promise",
            "19 euros con 84",
        ),
        ("paguei 286 e 90 no cartão", "user", "amount", "286 e 90"),
        ("I paid 19 dollars and 84 cents", "user", "amount", "19 dollars and 84 cents"),
        ("Correção: na verdade dia 16/4. O procedimento", "assistant", "deadline", "dia 16/4"),
    ],
)
def test_money_and_dates_said_in_parts_are_whole(
    said: str, role: str, kind: str, value: str
) -> None:
    facts = run("O prazo é até dia 10/4.", said, role=role)
    assert value in [f.value for f in facts if f.tags[0] == kind]


@pytest.mark.parametrize(
    "said", ["o prazo é entre 10 e 15 dias úteis", "comprei 2 e 3 unidades", "tenho 10 e 12 anos"]
)
def test_two_numbers_with_no_money_spoken_of_are_no_amount(said: str) -> None:
    facts = run(said)
    assert not [f for f in facts if f.tags[0] in ("amount", "promise")]


def test_a_bare_corrected_number_too_short_for_a_phone_corrects_the_order() -> None:
    facts = run(
        "meu pedido é 494461", "meu telefone é (76) 91622-9220", "na verdade e 494416 digitei"
    )
    current = {f.tags[0]: f.value for f in current_facts(facts)}
    assert current["order"] == "494416"
    assert current["phone"] == "(76) 91622-9220"


@pytest.mark.parametrize(
    ("said", "kind", "value"),
    [
        (
            "you'll get two hundred seventy-nine dollars back to fix this",
            "promise",
            "two hundred seventy-nine dollars",
        ),
        (
            "A nova previsão é 11/11. O procedimento é o seguinte",
            "deadline",
            "nova previsão é 11/11",
        ),
        (
            "La nueva fecha es el 15/04. ¿Puede probarlo ahora?",
            "deadline",
            "nueva fecha es el 15/04",
        ),
        ("Me enganei antes, o correto é 159 e 99. Confirma?", "promise", "159 e 99"),
    ],
)
def test_what_an_agent_commits_to_in_more_of_its_words(said: str, kind: str, value: str) -> None:
    facts = run("Posso reembolsar R$ 150,00 até dia 10/4.", said, role="assistant")
    assert value in [f.value for f in current_facts(facts) if f.tags[0] == kind]


def test_a_dated_deadline_outlives_the_durations_an_agent_repeats() -> None:
    facts = [fact("deadline", "29 de agosto", 1)]
    facts += [fact("deadline", f"em até {n} dias úteis", 2 + n) for n in range(5)]
    kept = [f.value for f in current_facts(facts)]
    assert "29 de agosto" in kept
    assert len(kept) == KEEP_PER_KIND
    assert "em até 4 dias úteis" in kept  # the newest duration too


def test_a_bare_corrected_number_grouped_like_a_phone_corrects_the_phone() -> None:
    facts = run(
        "mi numero es +34 610 891 954",
        "pagué 150 euros con 88",
        "en realidad es 667-905-981. en la web ponía otra cosa",
    )
    current = {f.tags[0]: f.value for f in current_facts(facts)}
    assert current["phone"] == "667-905-981"
    assert current["amount"] == "150 euros con 88"


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("e aí aí tô em em goiânia aí se precisar", "city", "goiânia"),
        ("my my name is is John Smith", "name", "John Smith"),
        ("o pedido é seis seis zero zero um dois", "order", "seis seis zero zero um dois"),
        ("me dicen el sku sku pp38-09 y nada", "sku", "sku pp38-09"),
    ],
)
def test_a_word_said_twice_in_a_transcript_is_read_once(text: str, kind: str, value: str) -> None:
    assert (kind, value) in pairs(extract_people_facts(turns(text), "phone", NOW))


def test_the_newest_deadline_stays_even_past_a_kinds_worth_of_dated_ones() -> None:
    facts = [fact("deadline", f"até {n} de agosto", n) for n in range(1, KEEP_PER_KIND + 1)]
    facts.append(fact("deadline", "em até 5 dias úteis", 9))
    kept = [f.value for f in current_facts(facts)]
    assert "em até 5 dias úteis" in kept and "até 1 de agosto" not in kept


def _said_later(facts: list[Fact], text: str, at: float, role: str = "user") -> list[Fact]:
    """The facts with those a later message states again marked so (as a turn does)."""
    heard = extract_people_facts(turns(text, role=role), "webchat", at)
    return with_said_again(facts, said_again(facts, heard))


def test_a_promise_a_later_turn_refers_to_outlives_a_kinds_worth_of_newer_ones() -> None:
    """An earlier conversation's refund, asked after by the customer in this one (as an
    amount: "e os R$ 380,00 ..."), is still among the facts after as many newer promises
    as its kind keeps, said once each; without the question it is the first to go."""
    facts = run("Combinado: vamos estornar R$ 380,00 no seu cartão.", role="assistant")
    asked = _said_later(facts, "e os R$ 380,00 que vocês iam estornar? nada ainda", NOW + 60)
    for n in range(KEEP_PER_KIND + 1):
        newer = extract_people_facts(
            turns(f"Posso te reembolsar R$ {n + 11},00 do frete.", role="assistant"),
            "webchat",
            NOW + 120 + n,
        )
        facts, asked = current_facts([*facts, *newer]), current_facts([*asked, *newer])
    promises = [f.value for f in asked if f.tags[0] == "promise"]
    assert "R$ 380,00" in promises and len(promises) == KEEP_PER_KIND, promises
    assert f"R$ {KEEP_PER_KIND + 11},00" in promises  # the newest stays
    assert "R$ 380,00" not in [f.value for f in facts if f.tags[0] == "promise"]


def test_a_deadline_whose_day_is_said_back_is_kept() -> None:
    """The customer saying back, in other words, the day a deadline names refers to it:
    newer deadlines said once do not push it out."""
    facts = run("O prazo de entrega é até 29 de agosto de 2024.", role="assistant")
    facts = _said_later(facts, "então chega até 29/08/2024 mesmo?", NOW + 60)
    for n in range(5):
        facts = current_facts([*facts, fact("deadline", f"até {n + 2} de setembro", NOW + 99 + n)])
    assert "até 29 de agosto de 2024" in [f.value for f in facts if f.tags[0] == "deadline"]


def test_only_a_few_facts_of_a_kind_are_kept_for_being_said_again() -> None:
    """Of a kind, at most KEEP_SAID_AGAIN are kept for having been said again (those
    said again last), the newest always stays, and the kind never holds more than it
    did: the facts block stays as small."""
    k = KEEP_PER_KIND
    facts = [fact("order", str(n), n) for n in range(1, k + 1)]
    heard = [fact("order", str(n), 10 + n) for n in (1, 2, 3)]  # 1, 2, 3 said again
    facts = with_said_again(facts, said_again(facts, heard))
    for n in range(k + 1, 2 * k):
        facts = current_facts([*facts, fact("order", str(n), n + 20)])
    kept = [f.value for f in facts]
    assert len(kept) == k and KEEP_SAID_AGAIN == 2, kept
    # 1 was said again first of the three; the newest fill the rest
    assert kept == ["2", "3", *(str(n) for n in range(k + 2, 2 * k))]


def test_said_again_marks_only_facts_a_later_turn_states_of_a_kind_that_keeps_several() -> None:
    app = Fact(id="crm", text="order: 1", tags=("order",), value="1", created_at=1)
    facts = [fact("order", "1", 2), fact("city", "Recife", 3), app, fact("order", "2", 4)]
    heard = [fact("order", "1", 9), fact("city", "Recife", 9), fact("order", "2", 3)]
    renewed = said_again(facts, heard)
    # the city keeps one value anyway; the app's fact is never pruned; "2" was not said
    # again after it was heard
    assert [(f.id, f.said_again_at) for f in renewed] == [("order:1", 9)]
    assert [f.said_again_at for f in with_said_again(facts, renewed)] == [9, None, None, None]
    # a mark said again earlier than the one the fact holds does not replace it
    older = [dataclasses.replace(renewed[0], said_again_at=5.0)]
    assert with_said_again(with_said_again(facts, renewed), older)[0].said_again_at == 9


@pytest.mark.parametrize(
    "text",
    [
        "a entrega ficou para o dia\n16/4",  # a date's parts on two lines: no crash
        "chega dia\t16/4 e nada",
    ],
)
def test_a_date_split_by_a_tab_or_a_line_is_read_without_error(text: str) -> None:
    facts = run(text, *(f"o prazo é até dia {n}/5" for n in range(1, 6)), role="assistant")
    assert current_facts(facts)


@pytest.mark.parametrize(
    ("chat", "kind", "value"),
    [
        # an accented earlier value shares its words with the folded correction
        (
            ["meu nome é Tânia", "moro em Curitiba", "o correto é Tânia Souza"],
            "name",
            "Tânia Souza",
        ),
        # a code with one dash is no phone
        (
            ["meu telefone é 11 98765-4321", "pedido 2024-556677", "na verdade é 2024-556678"],
            "order",
            "2024-556678",
        ),
        # a code with letters is no amount, whatever was said last
        (["pedido ped-2211", "paguei R$ 40,00", "corrige aí: ped-2214"], "order", "ped-2214"),
        # six digits are no sum of money: the order said before
        (["pedido 221133", "paguei R$ 40,00", "corrige aí 221144 ok"], "order", "221144"),
        (["pedido 221133", "paguei R$ 40,00", "corrige aí 221144 ok"], "amount", "R$ 40,00"),
        (["pedido 221133", "sku ab12-34", "corrige aí 221144 ok"], "sku", "sku ab12-34"),
        (
            ["pedido 221133", "fone 11987654321", "corrige aí 11987654329 ok"],
            "phone",
            "11987654329",
        ),
        # an amount in two parts, or in slang, after the cue
        (["pedido 221133", "paguei R$ 40,00", "errei, o certo é 45 e 90"], "amount", "45 e 90"),
        (["pedido 221133", "paguei R$ 40,00", "corrige aí 45 conto"], "amount", "45 conto"),
        # not a pair said with a unit
        (["pedido 221133", "paguei R$ 40,00", "na verdade é 10 e 15 dias"], "amount", "R$ 40,00"),
        (["pedido 221133", "paguei R$ 40,00", "o certo é 2 e 3 caixas"], "amount", "R$ 40,00"),
    ],
)
def test_what_a_bare_correction_corrects_by_its_words_and_shape(
    chat: list[str], kind: str, value: str
) -> None:
    current = {f.tags[0]: f.value for f in current_facts(run(*chat))}
    assert current[kind] == value


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("I live in Walla Walla", "city", "Walla Walla"),
        ("Rua Augusta 500 casa e o pedido não chegou", "address", "Rua Augusta 500"),
    ],
)
def test_a_name_said_twice_and_a_lowercase_letter_keep_their_meaning(
    text: str, kind: str, value: str
) -> None:
    assert (kind, value) in pairs(extract(text))


@pytest.mark.parametrize(
    "text",
    [
        "Hello, it's Amazon Prime that charged me twice",
        "Good morning, it's Christmas Eve and nothing arrived",
        "hey it's Apple Pay that failed",
    ],
)
def test_its_names_no_one_when_the_name_runs_on(text: str) -> None:
    assert not [f for f in extract(text) if f.tags[0] == "name"]


@pytest.mark.parametrize(
    "said",
    [
        "Your order of $120 shipped and you'll get a tracking email",
        "vai receber a geladeira de R$ 3.500 amanhã",
        "Certo, te ligo de volta sobre os R$ 250",
    ],
)
def test_money_named_near_a_delivery_or_a_call_back_is_no_promise(said: str) -> None:
    assert not [f for f in run(said, role="assistant") if f.tags[0] == "promise"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Everyone in my house got charged twice", "Everyone in my house got charged twice"),
        (
            "Pessoal da loja me mandou o produto errado",
            "Pessoal da loja me mandou o produto errado",
        ),
    ],
)
def test_a_vocative_word_that_is_the_subject_stays_in_the_problem(text: str, problem: str) -> None:
    assert [f.value for f in extract(text) if f.tags[0] == "problem"] == [problem]


@pytest.mark.parametrize(
    "text",
    [
        "cobraram no dia 10 e 15 de março",
        "I want a refund for items 3 and 12",
    ],
)
def test_days_and_items_said_in_pairs_are_no_amount(text: str) -> None:
    assert not [f for f in extract(text) if f.tags[0] == "amount"]


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("continua igual não, espera, é 214573 paguei o frete mais caro", "214573"),
        ("no, wait, it's 375644 I paid for faster shipping", "375644"),
        ("no, perdón, es 88412-3 lo pagué con tarjeta", "88412-3"),
    ],
)
def test_a_corrected_code_may_run_on_into_the_turn(said: str, value: str) -> None:
    """After a weak cue a bare word must end its clause (a run-on word is a guess), but
    an identifier of five digits or more is the corrected value however the turn goes on."""
    facts = run("o número do pedido é ped498940", said)
    assert {f.tags[0]: f.value for f in current_facts(facts)}["order"] == value


@pytest.mark.parametrize(
    "said",
    [
        "no, it's 2024 and I still have no refund",  # four digits: a year, an amount
        "no, it's fine, 12345 came yesterday",  # the cue's value is "fine"
        "nao espera e 12 reais a mais que o combinado",
    ],
)
def test_a_run_on_number_that_is_no_code_corrects_nothing(said: str) -> None:
    facts = run("o número do pedido é ped498940", said)
    assert {f.tags[0]: f.value for f in current_facts(facts)}["order"] == "ped498940"


def test_a_cue_mid_sentence_corrects_a_city_an_earlier_conversation_gave() -> None:
    """ "... e nada na verdade e Belo Horizonte digitei errado": a cue said mid-sentence
    corrects only a kind the customer has given, in this conversation or an earlier one
    (lent as `elsewhere`); with neither it makes nothing."""
    earlier = extract_people_facts(
        [{"role": "user", "content": "eu moro em Salvador"}], "chat", NOW
    )
    said = "o atendente disse que ia me retornar e nada na verdade e Belo Horizonte digitei errado"
    message = [{"role": "user", "content": said}]
    got = extract_people_facts(message, "chat", NOW + 1, [], earlier)
    assert ("city", "Belo Horizonte") in {(f.tags[0], f.value) for f in got}
    assert not [f for f in extract_people_facts(message, "chat", NOW + 1) if f.tags[0] == "city"]


def current(*chat: str, role: str = "user") -> dict[str, str]:
    return {f.tags[0]: f.value for f in current_facts(run(*chat, role=role))}


@pytest.mark.parametrize(
    ("chat", "kind", "value"),
    [
        (["moro em Recife", "desculpa, o correto hum é Natal, viu"], "city", "Natal"),
        (["i live in denver", "ugh scratch uh that boston sorry"], "city", "boston"),
        (["i live in denver", "so my city um is boston and that's it"], "city", "boston"),
        (["vivo en Lima", "perdón, en o sea realidad es quito y bueno"], "city", "quito"),
        (["me llamo Ana", "error mío, el pues correcto es Ana Ruiz"], "name", "Ana Ruiz"),
        # and no city of what is no value
        (["moro em Recife", "my city uh is lovely in the spring"], "city", "Recife"),
        (["moro em Recife", "o correto hum é vocês me ligarem"], "city", "Recife"),
        (["moro em Recife", "scratch like that, i just want my refund"], "city", "Recife"),
        # "actually" in what is asked about corrects nothing
        (
            ["i live in Phoenix", "i'd just like to understand what actually happeend"],
            "city",
            "Phoenix",
        ),
    ],
)
def test_a_correction_cue_said_as_people_say_it(chat: list[str], kind: str, value: str) -> None:
    """A call's transcript puts "uh", "hum", "pues" between a cue's words, a chat "oops
    typo" before it: still a cue, whose value must still be one."""
    assert current(*chat)[kind] == value


PASTED_LOG = (
    "segue o erro do app:\n"
    "2025-03-02T10:11:12.345Z ERROR [orders-api] req=9f3ab2c1 GET /api/v2/me 401 Unauthorized\n"
    "2025-03-02T10:11:13.002Z WARN [checkout-api] retry attempt=3 backoff_ms=2500\n"
    '  File "/srv/orders/views.py", line 88, in create\n'
    "2025-03-02 10:11:14,120 INFO [session-gw] token refreshed"
)


def test_a_pasted_log_states_no_order() -> None:
    """Timestamps, request ids and status codes after a service named "orders-api" are
    the log's, not the customer's: they would push the real order out of the four kept."""
    facts = run("meu pedido é o 558812", PASTED_LOG)
    assert [f.value for f in current_facts(facts) if f.tags[0] == "order"] == ["558812"]


def test_an_agent_cue_that_restates_nothing_leaves_a_dated_deadline() -> None:
    """ "Não é essa a experiência que queremos" reads as a denial ("não, é ..."); with no
    value restated after it, the duration later in the reply corrects no deadline."""
    chat = [
        "A nova previsão de entrega é 25/06.",
        "Não é essa a experiência que queremos oferecer. A transportadora tem até cinco dias "
        "úteis para responder.",
    ]
    facts = run(*chat, role="assistant")
    assert not any("correction" in f.tags for f in facts)
    deadlines = [f.value for f in current_facts(facts) if f.tags[0] == "deadline"]
    assert deadlines == ["nova previsão de entrega é 25/06", "até cinco dias úteis"]


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("You'll get 179.99 dollars back within a week.", "179.99 dollars"),
        (
            "you'll get three hundred forty-two dollars and eighty-one cents back",
            "three hundred forty-two dollars and eighty-one cents",
        ),
    ],
)
def test_money_coming_back_is_a_promise_with_cents_or_spelled(said: str, value: str) -> None:
    assert ("promise", value) in pairs(extract(said, role="assistant"))


@pytest.mark.parametrize(
    ("chat", "kind", "values"),
    [
        # corrected since it was heard: the fold does not bring it back as the newest
        (
            [("user", "i paid two hundred eleven dollars"), ("user", "wait no it's fifty dollars")],
            "amount",
            ["fifty dollars"],
        ),
        (
            [("user", "o pedido é 554411"), ("user", "não, espera, é 554412 o pedido")],
            "order",
            ["554412"],
        ),
        # an agent's value was never heard before its fold: it stays
        (
            [("user", "i paid forty dollars"), ("assistant", "we can refund thirty dollars")],
            "promise",
            ["thirty dollars"],
        ),
    ],
)
def test_a_fold_brings_back_no_value_lost_since(
    chat: list[tuple[str, str]], kind: str, values: list[str]
) -> None:
    """Each customer message is heard as it arrives, then again when its turn folds."""
    facts: list[Fact] = []
    for n, (role, text) in enumerate(chat):
        if role == "user":
            message = [{"role": role, "content": text}]
            facts = current_facts([*facts, *extract_people_facts(message, "voice", NOW + n, facts)])
    fold = [{"role": role, "content": text} for role, text in chat]
    heard = extract_people_facts(fold, "voice", NOW + 10, facts)
    kept = merged_facts(facts, not_heard_before(heard, facts, NOW - 1))
    assert [f.value for f in kept if f.tags[0] == kind] == values


@pytest.mark.parametrize(
    ("known", "said", "value"),
    [
        (
            "call me on 415 555 0134",
            "oops typo should be 415-555-0199 the site said",
            "415-555-0199",
        ),
        ("meu nome é Ana", "ops, typo, o correto é Ana Lima e mais nada", "Ana Lima"),
    ],
)
def test_words_owning_up_to_a_slip_open_a_correction(known: str, said: str, value: str) -> None:
    """ "oops typo should be ...": one after another, then the cue."""
    (fact,) = (f for f in run(known, said) if f.value == value)
    assert "correction" in fact.tags


# Real small talk (bench/facts_on_chitchat.py reads chitchat-dataset's 7,168 human chats
# the same way): an everyday word after a weak cue names no one and no place, and
# someone else's name is not the customer's. Sentences written here in the manner of
# that set, not copied from it.
@pytest.mark.parametrize(
    "later",
    [
        "Same here. I could never sit through the whole thing.",
        "I'm Frozen solid waiting at the bus stop",
        "sorry I meant Frozen, the movie",
        "my sister's name is Julia and she hates it",
        "my sisters name is julia lol",
        "his name is Marcos, we met in 4th grade",
        "I can never remember the names, though.",
        "the team names usually come from mascots",
    ],
)
def test_small_talk_after_the_name_leaves_the_customer_named(later: str) -> None:
    facts = extract("Hi, my name is Ana Souza and my parcel is late", later)
    names = [f.value for f in current_facts(facts) if f.tags[0] == "name"]
    assert names == ["Ana Souza"]


@pytest.mark.parametrize(
    "text",
    [
        "Jarvis from Iron Man is the best assistant",
        "they could be sent to jail for that",
        "it is hard to get in if you live in state",
        "I am in class right now so I type slowly",
    ],
)
def test_an_everyday_word_after_a_place_cue_is_no_city(text: str) -> None:
    assert "city" not in kinds(extract(text))


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("I'm Deandra. I'm new here.", "name", "Deandra"),  # no listed first name
        ("name's Casey", "name", "Casey"),
        ("my first name is Tom", "name", "Tom"),
        ("moro em Vila Mariana", "city", "Vila Mariana"),  # "vila" is an everyday word
        ("sou de Natal", "city", "Natal"),  # so is "natal": a big city first
        ("I live in Reading", "city", "Reading"),
        ("I'm from Provo", "city", "Provo"),
        ("I am from New York, but we moved", "city", "New York"),  # GeoNames: "New York City"
    ],
)
def test_a_name_or_place_that_is_no_everyday_word_is_still_heard(
    text: str, kind: str, value: str
) -> None:
    assert (kind, value) in pairs(extract(text))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("hello! Hows it going? my order never arrived", "my order never arrived"),
        ("Hi there, how's your day going? The app crashes at login", "The app crashes at login"),
        (
            "Hi! Thanks for getting back to me. My refund is still missing",
            "My refund is still missing",
        ),
        ("how have you been? my card was declined twice", "my card was declined twice"),
        ("oi, como você está? meu pedido não chegou", "meu pedido não chegou"),
        ("hola, ¿cómo estás? mi pedido no llegó", "mi pedido no llegó"),
        # asking how something will go is the question itself
        (
            "How's it going to be delivered if the address is wrong?",
            "How's it going to be delivered if the address is wrong",
        ),
    ],
)
def test_asking_how_the_agent_is_is_courtesy_not_the_problem(text: str, problem: str) -> None:
    assert [f.value for f in extract(text) if f.tags[0] == "problem"] == [problem]


def test_a_renewal_takes_only_the_time_onto_the_fact_as_it_is_now() -> None:
    """A turn marks a fact said again from the copy it read at its start; meanwhile the
    app may have confirmed or scoped that fact (PUT /facts): the mark changes its time
    only, and a fact the app made its own (no longer extracted) is not renewed."""
    read = [fact("promise", "R$ 380,00", 1)]
    renewed = said_again(read, [fact("promise", "R$ 380,00", 60)])
    assert renewed and renewed[0].said_again_at == 60
    scoped = dataclasses.replace(read[0], tags=(*read[0].tags[:1], "verified"), confirmed=True)
    [now] = with_said_again([scoped], renewed)
    assert now.said_again_at == 60 and now.confirmed and "verified" in now.tags
    owned = dataclasses.replace(scoped, extracted=False)
    assert with_said_again([owned], renewed) == [owned]


@pytest.mark.parametrize("stored", ["2024-01-01", 1e300, -5, True, None, [1], float("nan")])
def test_a_damaged_said_again_time_in_a_stored_fact_is_read_as_none(stored: Any) -> None:
    """A facts document damaged by hand or by another version: the fact is read, its
    said-again time is not (a string failed every turn that compared it; 1e300 pinned the
    fact for ever)."""
    doc = {**fact_to_json(fact("promise", "R$ 380,00", 1)), "said_again_at": stored}
    read = fact_from_json(doc)
    assert read.value == "R$ 380,00" and read.said_again_at is None
    assert current_facts([read, fact("promise", "R$ 12,00", 2)])  # compares without failing


def test_the_packaged_common_words_are_the_installed_lists_ranked() -> None:
    """gateway/data/common_words.txt saves every process ~0.8 s of ranking at start: it
    must be what ranking the installed lists gives (else: `python -m
    gateway.context.common_words > gateway/data/common_words.txt`)."""
    assert common_words() == ranked_words()
    assert is_common("Frozen") and is_common("obrigada") and not is_common("Itaquaquecetuba")


@pytest.mark.parametrize(
    ("said", "role", "kind", "shown"),
    [
        ("o protocolo é quatro um oito oito dois zero", "assistant", "order", "(418820)"),
        ("o pedido é sete sete três zero dois nove um", "user", "order", "(7730291)"),
        ("paguei trezentos e oitenta reais pelo conserto", "user", "amount", "(BRL 380.00)"),
        (
            "vamos estornar seiscentos e doze reais e quarenta e sete no seu cartão",
            "assistant",
            "promise",
            "(BRL 612.47)",
        ),
        ("foram oitenta e sete reais e quarenta centavos", "user", "amount", "(BRL 87.40)"),
        (
            "I'm putting a credit of one hundred and fifty dollars on it",
            "assistant",
            "promise",
            "(USD 150.00)",
        ),
    ],
)
def test_a_code_or_sum_said_in_words_is_shown_with_its_figures(
    said: str, role: str, kind: str, shown: str
) -> None:
    """A transcript says "quatro um oito oito dois zero" or "seiscentos e doze reais e
    quarenta e sete": the facts block shows the figures after the words, as a date shows
    its day, the value stays as said (and its cents are part of it)."""
    [fact] = [f for f in extract(said, role=role) if f.tags[0] == kind]
    assert shown in fact.text and shown not in fact.value, fact
    assert fact.text.index(fact.value) < fact.text.index(shown)


def test_figures_said_in_pairs_are_not_made_a_number() -> None:
    """ "one sixty nine ninety five" is $169.95 as a price and 16995 read out: no figures
    are shown for it rather than wrong ones."""
    [fact] = [
        f for f in extract("it was one sixty nine ninety five dollars") if f.tags[0] == "amount"
    ]
    assert "(" not in fact.text, fact


@pytest.mark.parametrize(
    ("before", "said", "name"),
    [
        (
            "lumina fibra boa tarde meu nome é wesley com quem eu falo",
            "boa tarde wesley aqui é a rosângela tavares mendonça eu sou cliente de vocês",
            "rosângela tavares mendonça",
        ),
        ("", "isso, sou eu, everton luiz paiva. a insulina é pra minha mãe", "everton luiz paiva"),
        ("", "sí, soy yo, laura cárdenas ruiz", "laura cárdenas ruiz"),
    ],
)
def test_a_name_transcribed_in_lowercase_is_heard(before: str, said: str, name: str) -> None:
    """A phone transcript writes names in lowercase and no list holds every name
    ("rosângela"): after a cue that introduces a person, two or three words none of
    which is an everyday word are a full name; the agent's own name, greeted first, is
    not the customer's."""
    facts = extract_people_facts(turns(said), "phone", NOW, before=before)
    assert [f.value for f in facts if f.tags[0] == "name"] == [name]


@pytest.mark.parametrize(
    "said",
    [
        "I'm lactose intolerant so no milk",
        "sou muito grata pela ajuda",
        "sou a mesma pessoa de ontem",
    ],
)
def test_words_that_describe_the_speaker_are_no_name(said: str) -> None:
    assert "name" not in kinds(extract(said))


def test_a_name_the_agent_gave_as_its_own_is_not_the_customers() -> None:
    facts = extract_people_facts(
        turns("boa tarde wesley aqui"), "phone", NOW, before="meu nome é wesley, com quem falo?"
    )
    assert "name" not in kinds(facts)


@pytest.mark.parametrize("said", ["o crédito entra em até 1 dia", "te respondemos en 1 día hábil"])
def test_one_day_to_wait_is_no_first_of_the_month(said: str) -> None:
    """ "em até 1 dia" is a duration: no date of the 1st is shown for it."""
    facts = extract(said, role="assistant")
    assert not any("-01)" in f.text for f in facts), facts


@pytest.mark.parametrize(
    ("said", "address"),
    [
        (
            "é rua halfeld quatrocentos e doze apartamento trezentos e um centro juiz de fora",
            "rua halfeld quatrocentos e doze apartamento trezentos e um",
        ),
        (
            "ta na garagem de casa. rua marechal deodoro 89 kalilandia, feira de santana",
            "rua marechal deodoro 89 kalilandia",
        ),
        ("entrega na rua das flores 12 jardim europa, curitiba", "rua das flores 12 jardim europa"),
        ("moro na rua augusta 1500 perto, são paulo", "rua augusta 1500"),
    ],
)
def test_a_spoken_door_and_a_lowercase_district_are_part_of_the_address(
    said: str, address: str
) -> None:
    """A door said in words ending in "um" ("trezentos e um": not "um" = "a"), and a
    district typed in lowercase before the city."""
    assert ("address", address) in pairs(extract(said))


@pytest.mark.parametrize(
    ("said", "city"),
    [
        ("é rua halfeld quatrocentos e doze apartamento trezentos e um centro juiz de fora",
         "juiz de fora"),
        ("é rua halfeld 412 apartamento 301, centro, juiz de fora", "juiz de fora"),
        ("ta na garagem de casa. rua marechal deodoro 89 kalilandia, feira de santana",
         "feira de santana"),
        ("avenida patria mil ochocientos noventa y uno interior siete colonia jardines "
         "universidad zapopan", "zapopan"),
        ("Rua Halfeld, 412, apto 301 - Centro, Juiz de Fora. Obrigada", "Juiz de Fora"),
        ("my address is 2291 Neil Avenue, Apt 4B, Columbus", "Columbus"),
    ],
)  # fmt: skip
def test_the_big_city_that_ends_an_address_is_its_city(said: str, city: str) -> None:
    """An address said whole ends with its city, in any case, however many words (a
    district) come between; one everyday word in lowercase ("natal") is not taken."""
    assert ("city", city) in pairs(extract(said))


@pytest.mark.parametrize(
    "said", ["rua das flores 12 natal", "rua augusta 1500 e o problema é que não chega nada"]
)
def test_no_city_ends_these_addresses(said: str) -> None:
    assert "city" not in kinds(extract(said))


@pytest.mark.parametrize(
    "said",
    [
        "Prezados, bom dia.\nFiz uma reserva pelo site.\n\nAtenciosamente,\nRenata Lopes Vieira"
        "\nRio de Janeiro - RJ\n(21) 97755-3210",
        "Please refund the charge.\n\nThanks,\nDana Kim\nPortland, OR",
    ],
)
def test_a_signatures_town_is_the_customers_city(said: str) -> None:
    """A line of a signature that is a big city and its state, nothing else."""
    assert "city" in kinds(extract(said))


@pytest.mark.parametrize(
    "said",
    [
        "I flew twice last year.\nParis was lovely and so was the hotel.",
        "Boa tarde\nQuero trocar o voo para\nFortaleza - CE\nobrigado",
        "Olá\nDestino da viagem:\nSalvador\nObrigado",
        "Which stores do you have?\nLondon\nManchester\nLeeds",
        "Hello\nI need a hotel in\nNew York, NY",
    ],
)
def test_a_city_on_a_line_of_its_own_under_no_signature_is_not_the_customers(said: str) -> None:
    """A destination, a list, a city inside a line of text: no sign-off or name above."""
    assert "city" not in kinds(extract(said))


@pytest.mark.parametrize(
    "said",
    [
        "entreguem na rua augusta 1500 para minha mãe que mora em campinas",
        "the package went to 12 Oak Street and not to my sister in Chicago",
        "I sent it to 12 Oak Street for my mom who lives in Denver",
        "la entrega era en calle morelos 45 pero estoy de viaje en cancún",
        "moro na rua augusta 1500 mas comprei pela loja de porto alegre",
    ],
)
def test_a_city_after_an_address_in_a_clause_about_someone_else_is_not_its_city(
    said: str,
) -> None:
    assert "city" not in kinds(extract(said))


@pytest.mark.parametrize(
    ("said", "reference"),
    [
        ("Your dispute number is DSP-26-118402, covering both transactions", "DSP-26-118402"),
        ("o crédito é vinculado à ocorrência OC-558102, sem nova solicitação", "OC-558102"),
        ("We have your file CMHBG40217 open with the airport", "CMHBG40217"),
    ],
)
def test_more_of_the_agents_words_for_a_reference(said: str, reference: str) -> None:
    facts = [f for f in extract(said, role="assistant") if f.tags[0] == "order"]
    assert [f.value for f in facts] == [reference], facts


@pytest.mark.parametrize(
    ("said", "role", "value"),
    [
        (
            "We will refund forty dollars and one of our team will call you",
            "assistant",
            "forty dollars",
        ),
        ("Vamos reembolsar cinquenta reais e um cupom de desconto", "assistant", "cinquenta reais"),
        ("Le devolveremos cien euros y una disculpa formal", "assistant", "cien euros"),
        ("I have 2 100 euro notes to pay with", "user", "100 euro"),
    ],
)
def test_what_follows_a_sum_is_no_part_of_it(said: str, role: str, value: str) -> None:
    """ "and one of our team" is no cent (the review found "USD 40.01"); "2 100 euro
    notes" are two notes, not 2,100 euros."""
    money = [f.value for f in extract(said, role=role) if f.tags[0] in ("amount", "promise")]
    assert money == [value], money


def test_the_packaged_unicode_tables_are_what_this_pythons_unicode_builds() -> None:
    """gateway/data/unicode_tables.json saves every process ~0.5 s at start (~4 s under
    coverage: every gateway the tests start paid it): for the Unicode it was built for,
    it must be what the builders make (else: `python -m gateway.context.unicode_tables >
    gateway/data/unicode_tables.json`). A Python of another Unicode builds its own."""
    packaged = json.loads(
        (importlib.resources.files("gateway") / "data" / unicode_tables.PACKAGED).read_text()
    )
    assert packaged["unidata_version"] == "14.0.0"  # Python 3.11's, which CI runs
    assert unicode_tables.tables() == unicode_tables.built()  # read, if this Python's
    assert plain("\uff14\uff11\uff15\u00a0555\u200b0134") == "415 5550134"


def test_unicode_tables_missing_from_the_package_are_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A package without the file (or with a damaged one) builds the tables at start,
    as before the file shipped, rather than failing every import."""
    monkeypatch.setattr(unicode_tables, "PACKAGED", "no_such_tables.json")
    assert unicode_tables.tables.__wrapped__() == unicode_tables.built()
