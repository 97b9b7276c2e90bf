"""The word lists that tell a name, a city or a street from a common word, in Portuguese,
English and Spanish, all folded (no accents). Pure data.

"I'm frustrated", "sou ruim com isso", "soy nuevo" and "entregar em mãos" have the shape
of a name or a place after its cue; only knowing the word tells them apart. A list here
holds no first name ("Grace", "Rosa", "Clara" stay names).
"""

from __future__ import annotations

from gateway.context.people_numbers import MULTIPLIERS, NUMBERS, ORDINALS
from gateway.context.people_text import next_word, word_set

# How a customer says they are ("I'm frustrated", "sou péssima com app", "soy torpe"):
# moods, states, roles in life, what they are like with technology; and how a city is
# ("the city is big"). Only as a name's or city's first word: "Campina Grande", "Porto
# Seguro" and "Maria Paciente" stay whole.
STATES = word_set(
    "great fine alright terrible awful horrible poor useless hopeless clueless helpless broke "
    "broken exhausted stressed anxious impatient patient calm unsure aware unaware familiar "
    "unfamiliar elderly senior disabled deaf blind pregnant alone single married divorced "
    "widowed retired unemployed free done finished fed sleepy hungry miserable mayor "
    "depressed heartbroken devastated embarrassed ashamed hopeful skeptical suspicious curious "
    "lazy slow dumb stupid silly lame illiterate techy savvy hard allergic incapable eligible "
    "liable entitled fair unfair nuts livid irate grumpy outraged disgusted amazed thrilled "
    "relieved fond keen never always almost nearly completely absolutely kind sort bit little "
    "lot barely hardly fairly rather somewhat way beyond through past cool terrific wonderful "
    "excellent amazing decent awesome bummed gutted torn stumped baffled puzzled sure sorry "
    "teacher nurse doctor lawyer student engineer developer retiree veteran freelancer "
    "contractor manager director tenant landlord resident neighbor neighbour parent mom mum "
    "dad mother father wife husband son daughter friend fan nonsense joke madness robbery "
    "theft fraud scam harassment outrage disgrace mess nightmare shame insult chaos disaster "
    "ruim pessimo pessima horrivel terrivel otimo otima maravilhoso maravilhosa incrivel leigo "
    "leiga idoso idosa jovem burro burra lerdo lerda lento lenta desastrado desastrada "
    "esquecido esquecida ansioso ansiosa nervoso nervosa paciente impaciente exigente teimoso "
    "teimosa curioso curiosa honesto honesta sincero sincera direto direta timido timida "
    "analfabeto analfabeta fraco fraca negado negada mau ma bobo boba tonto tonta doido doida "
    "louco louca chato chata fa vizinho vizinha morador moradora funcionario funcionaria "
    "empresario empresaria deficiente surdo surda cego cega gravida sozinho sozinha solteiro "
    "solteira viuvo viuva separado separada divorciado divorciada desempregado desempregada "
    "autonomo autonoma advogado advogada medico medica enfermeiro enfermeira motorista "
    "vendedor vendedora comerciante lojista revendedor revendedora parceiro parceira socio "
    "socia gerente diretor diretora tecnico tecnica engenheiro engenheira contador contadora "
    "dentista programador programadora capaz incapaz grato grata agradecido agradecida "
    "consciente ciente culpado culpada legal cuidadoso cuidadosa infeliz satisfeito satisfeita "
    "insatisfeito insatisfeita decepcionado decepcionada puto puta estressado estressada "
    "desesperado desesperada assustado assustada confuso confusa perdido perdida doente "
    "ocupado ocupada livre disponivel pronto pronta atrasado atrasada meio bastante super tao "
    "demais magoado magoada arrasado arrasada abalado abalada envergonhado envergonhada "
    "aflito aflita apavorado apavorada furioso furiosa inconformado inconformada pior melhor "
    "contra tia tio avo namorado namorada noivo noiva amigo amiga colega complicado "
    "complicada dificil facil caro barato barata longe perto calmo calma sensivel "
    "malo mala malisimo malisima torpe joven viejo vieja anciano anciana jubilado jubilada "
    "harto harta cansado cansada enojado enojada nervioso nerviosa directo directa inutil "
    "fatal pesado pesada loco loca vecino vecina residente maestro maestra profesor profesora "
    "ingeniero ingeniera enfermero enfermera abogado abogada medica satisfecho satisfecha "
    "insatisfecho insatisfecha confundido confundida enfermo enferma libre disponible listo "
    "temprano demasiado tan hermano hermana abuelo abuela novio novia pareja sordo sorda "
    "ciego ciega embarazada soltera soltero viudo viuda desempleado desempleada culpable "
    "facilisimo dificilisimo imposible posible impossible possible big small large huge tiny "
    "far close quiet safe dangerous expensive cheap pequena pequeno grande bonita bonito feia "
    "feio velha velho hermosa hermoso fea feo tranquila tranquilo perigosa perigoso peligrosa "
    "peligroso segura seguro quente fria frio calurosa caluroso cara"
)
# What follows "entregar em", "ship it to", "envío a" without being a city.
NOT_DESTINATION = word_set(
    "domicilio maos mao mano portaria vizinho vizinha tempo tiempo breve anexo pdf mim analise "
    "troca reembolso assistencia revision garantia cobrar correios transportadora agencia "
    "sucursal deposito armazem almacen outro outra otro otra other another him sede matriz "
    "filial local lugar pickup locker ponto punto retirada retiro box nota foto etiqueta senha "
    "mensagem confirmacao mano manos door porch mailbox neighbor garage reception recepcao "
    "recepcion estado cep quantos quantas quanto cuantos cuantas cuanto quais cuales"
)
# What a speaker says while finding the word ("my name is, er, John"): never a name.
HESITATIONS = word_set("er erm err uh uhh uhm um umm hm hmm eh ehm ah ahn hum")
# Neither may open a name or a city.
NOT_FIRST = STATES | NOT_DESTINATION | HESITATIONS
# A verb in its -ing form opens no name ("sou retomando o atendimento", "I'm following
# up", "soy siguiendo el caso"), nor one of resuming a call, however it is typed
# ("retomanfo"), when it is the name's only word; these names end like one.
GERUND_ENDINGS = ("ando", "endo", "indo", "iendo", "ing")
RESUMING_STEMS = ("retom", "continu")
GERUND_NAMES = word_set(
    "fernando orlando armando rolando hernando brando lando arlindo olindo florindo deolindo "
    "clarindo gracindo gumercindo rosendo sterling irving ewing manning channing fleming "
    "harding browning golding darling keating deming pershing spalding redding ching"
)
# Words that carry nothing on their own: greetings, function words, asking for help.
FILLER = word_set(
    "a an the i i'm im i've i'd i'll me my mine myself you your you're we we're our us they "
    "their them he she his her it it's its this that these those there here is am are was "
    "were be been being do does did done have has had will would shall should can could may "
    "might must not no yes yeah yep nope ok okay so very too also just only still already even "
    "really and or but if then than because as at in on of to from for with without about "
    "into over under up down out off by near now today tomorrow yesterday again back all any "
    "some each every what which who whom when where why how hi hello hey thanks thank please "
    "sorry dear sir madam well oh uh um hmm lol o os as um uma uns umas de do da dos das no na "
    "nos nas em ao aos pelo pela por para pra pro com sem sobre e ou mas que se nao sim ja "
    "ainda mais muito muita muitos pouco bem mal meu minha meus minhas seu sua seus suas eu "
    "voce voces ele ela eles elas isso isto esse essa este esta aquele aqui ali la ca hoje "
    "ontem amanha agora entao tambem quando onde como porque pq qual quem tudo nada todo toda "
    "oi ola bom boa dia tarde noite obrigado obrigada favor desculpa desculpe ta to tipo ne ai "
    "vc vcs q tb tbm el los las un unos unas del al con sin y pero si ya todavia muy mucho "
    "mucha mi mis tu tus su sus yo usted ustedes nosotros eso esto ese esa alli hoy ayer "
    "manana ahora entonces cual todo hola buenas buenos gracias perdon disculpe le lo les te "
    "nos es soy estoy help ajuda ayuda assist assistance support suporte soporte atendimento "
    "atencion question questions pergunta pregunta duvida duvidas duda info information "
    "informacao informacion need want wanted like preciso precisava quero queria gostaria "
    "necesito quiero quisiera pode poderia podem puede podria pueden someone anyone alguem "
    "alguien human humano agent atendente agente talk speak falar hablar get got hope espero "
    "doing going fine great good nice morning afternoon evening waiting wait aguardando "
    "aguardar esperando esperar entendi entendo understood understand perfect perfeito "
    "perfecto certo correto correta correcto correcta cierto cierta claro sure "
    "vale beleza combinado show otimo genial email e-mail mail "
    "correo phone telefone telefono celular whatsapp number numero name nome nombre address "
    "endereco direccion problem problema issue thing coisa cosa ask asking perguntar "
    "preguntar saber know sei sabe tell dizer decir sou soy live lives living moro vivo resido "
    "based located calling writing chamo llamo escribo rn atm btw pls plz kk kkk haha jaja faz "
    "hace ha quise quer dizer mean meant actually verdade realidad scratch mistake enganei "
    "errei correcao correction originally cliente customer client member subscriber "
    "assinante loyal fiel anos years since desde sigo continuo sigue vou vamos voy cel cell "
    "mobile movil whats zap wpp fone tel contato contacto urgent urgente urgencia urgency asap "
    "bother incomodar incomodo molestar molestia"
)
# And what follows "I'm", "sou", "soy", "this is", "moro em" without being a name or a city.
NOT_PROPER = (
    FILLER
    | word_set(
        "bye goodbye tchau adeus adios ciao cheers "
        "upset angry mad sad happy glad afraid sick tired bored scared worried annoyed frustrated "
        "disappointed confused concerned unhappy satisfied furious pissed ready available "
        "interested new old late early busy home outside inside online stuck lost unable able "
        "gonna kinda literally honestly seriously totally extremely super quite pretty definitely "
        "probably certain positive shocked surprised grateful thankful pleased excited nervous "
        "desperate customer client member subscriber user owner buyer calling writing trying "
        "looking having getting absurd insane crazy urgent important wrong weird strange odd "
        "serious terrible horrible awful bad unacceptable correct right regarding supposed exactly "
        "american brazilian mexican spanish portuguese colombian argentinian canadian british "
        "english chilean peruvian live living based located originally moving traveling away "
        "cliente consumidor consumidora assinante usuario usuaria titular dono dona responsavel "
        "mae pai filho filha esposa marido esposo mulher irma irmao pessoa unica unico primeira "
        "primeiro nova novo velha velho casado casada aposentado aposentada brasileiro brasileira "
        "portugues portuguesa estudante professor professora fiel mesmo mesma tenho tive estou "
        "estava vim vou fui fiz comprei recebi paguei pedi liguei moro falo escrevo acho achei vi "
        "consegui posso chateado chateada irritado irritada triste feliz revoltado revoltada "
        "indignado indignada cansado cansada frustrado frustrada preocupado preocupada dueno duena "
        "responsable madre padre hijo hija persona nuevo nueva mexicano mexicana colombiano "
        "colombiana argentino espanol espanola chileno chilena peruano peruana tengo tuve estaba "
        "compre hice recibi pague llame vivo escribo creo pense puedo enojado enojada molesto "
        "molesta casa house work trabalho trabajo escritorio office oficina town city cidade "
        "ciudad centro downtown bairro barrio zona interior capital area regiao region lado "
        "frente perto cerca longe lejos trouble hurry shock choque pain love line queue fila "
        "touch contact contato contacto doubt charge control debt bed hospital viagem viaje trip "
        "vacation ferias vacaciones reuniao reunion meeting process processo proceso transito "
        "traffic espera hold stock chat call ligacao llamada linea apartamento apartment apto "
        "condominio predio edificio building loja store tienda shop mall shopping site app "
        "aplicativo internet stuff menor maior january february march august september october "
        "november december janeiro fevereiro abril maio junho julho agosto setembro outubro "
        "novembro dezembro enero febrero mayo junio julio septiembre octubre noviembre diciembre "
        "monday tuesday wednesday thursday friday saturday sunday segunda terca quarta quinta "
        "sexta sabado lunes martes miercoles jueves viernes days day hours hour weeks week months "
        "month years year dias horas hora semanas semana meses mes anos ano minutos minutes "
        "minute vez vezes veces times time pedido pedidos order orders orden compra encomenda "
        "protocolo protocol ticket chamado reclamacao invoice fatura factura boleto codigo code "
        "sku produto product producto item modelo model reais dollars euros pesos since desde "
        "ate hasta until right rua avenida alameda travessa calle street road avenue look "
        "looked check checked visit visited buy bought find found go went try tried see saw quick "
        "order ordered shop shopped available sold listed seguinte siguiente following segundo "
        "tercero tercer socorro"
    )
    | frozenset(NUMBERS)
    | frozenset(ORDINALS)
    | frozenset(MULTIPLIERS)
)
# A street is named after numbers and dates ("Rua Sete de Setembro", "Calle 3 de Mayo"),
# kings and ordinals ("Rua Dom Pedro Segundo", "Fifth Avenue"), and after people by their
# title ("Rua Padre Anchieta", "Av. Professor Lineu Prestes", "Rua Dona Maria", "Calle
# Madre Teresa").
NOT_STREET = (
    NOT_PROPER
    - frozenset(NUMBERS)
    - frozenset(ORDINALS)
    - word_set("primeira segundo segunda terceiro terceira tercero tercera")
    - word_set(
        "janeiro fevereiro abril maio junho julho agosto setembro outubro novembro dezembro enero "
        "febrero mayo junio julio septiembre octubre noviembre diciembre "
        "padre professor professora dona irma madre sir"
    )
)
# A city's name may start with "new" or "nova", and go on with "velha" ("Vila Velha":
# STATES keeps it from opening one); alone, "city" is no city.
NOT_CITY = NOT_PROPER - word_set("new nova novo nuevo nueva city cidade ciudad janeiro velha velho")
TITLES = word_set("dr dra mr mrs ms miss sr sra srta prof profa dona don dom senhor senhora senor")
ABBREVIATIONS = word_set("st sta sto ft mt")
# Alone no city: "moro na vila" is where, not which.
PLACE_WORDS = word_set("city cidade ciudad new nova novo nuevo nueva vila villa")
CONNECTORS = word_set("de da do dos das del la las los di van von der du")
# Words that start the next clause of a run-on turn ("going to toronto and then ...").
CLAUSE_JOINS = word_set(
    "and but so then because cause um uh er like i also "
    "e mas entao ai tipo ne porque hum ahn "
    "y pero pues entonces este eh o sea mmm"
)


# Big cities whose names are everyday words: lowercase, they are the words ("going to
# split", "it's going to reading", "vai pra serra", "noite de natal").
COMMON_WORD_CITIES = word_set(
    "split reading mobile nice sale orange tours cork hull derby concord independence aurora "
    "natal vitoria palmas serra porto mesa"
)
# Who goes somewhere, not what is sent: "i'm going to ...", "we are going to ..." say what
# someone will do.
GOERS = word_set("i i'm im we we're were you you're youre they they're am are gonna")


def clause_ends(text: str, end: int) -> bool:
    """Whether the turn, or its clause, ends at `end`: nothing or punctuation after, or
    a word that starts the next clause."""
    return text[end : end + 1] in ("", ",", ".", "!", "?", ";", "\n") or (
        next_word(text, end) in CLAUSE_JOINS
    )


CONTRACTIONS = ("'s", "'m", "'re", "'ll", "'ve", "'d", "'t")
# Word endings no lowercase name has; "ei", "aram"...: Portuguese verbs said right after
# a name in a run-on chat ("aqui é thiago acabei de criar").
SUFFIXES: tuple[str, ...] = ("ing", "ed", "ly", "ful", "ous", "ive", "able", "ible", "ado")
SUFFIXES += ("ada", "ido", "ida", "ei", "aram", "eram", "iram")
# After "segunda" or "quinta" these make an ordinal, not a weekday ("segunda vez", "até
# segunda ordem").
NOT_WEEKDAY = word_set(
    "vez vezes via parcela tentativa opcao mao compra entrega semana ordem orden"
)

# Street types: a name just before one is a street's, not a city's ("ship to Baker Street").
STREET_WORDS = word_set(
    "street st road rd avenue ave lane ln drive dr boulevard blvd rua avenida av alameda "
    "travessa estrada rodovia praca calle carrera paseo plaza"
)
# After a house number these say it counts something else ("drive 2 hours", "rua 3 vezes").
# Words before "10 e 15" that make it days, items or a range, not units and cents.
# What joins an amount said in two parts: "237 e 49", "19 euros con 84".
CENTS_JOINERS = frozenset({"e", "y", "and", "con"})
NOT_CENTS_AFTER = word_set(
    "dia dias day days item items itens parcela parcelas entre between from desde nos los "
    "numeros numbers pedidos orders"
)
# The words that sign a message off ("12 Oak St, Regards."): never a district.
SIGN_OFF_WORDS = word_set(
    "regards best cheers thanks thank sincerely cordially atenciosamente atentamente "
    "cordialmente saludos aguardo beijos beijo abs abraco abracos att grato grata obrigado "
    "obrigada gracias valeu tchau bye"
)
# The words that may follow a weekday's bare day of the month ("el viernes 27 y el
# sábado 28", "sexta 13 de manhã"); any other word makes the number a count or an hour.
AFTER_DAY = word_set(
    "y e and de del of para pra por a at em en no na pelo pela ou or o el la de manha "
    "morning tarde afternoon noche night"
)
# An hour after a number: "Saturday 10 am", "segunda 9h", "lunes 10 horas".
TIME_WORDS = word_set("am pm a.m p.m h hs hrs horas hora hours hour o'clock oclock")
# The words that may follow a price said with no currency ("paguei 350 na entrega", "it
# cost 450 and I want it back"): a noun there makes it a count ("paid 40 invoices").
AFTER_PRICE = word_set(
    "na no nas nos num numa e and for on in at to pelo pela por via com with de do da em mas "
    "but so then que y en con el la por para pra pro only so solo ontem yesterday ayer hoje "
    "today hoy agora now ahora which that plus total already ja ya"
)
UNITS = word_set(
    "hours hour hrs minutes minute mins days day weeks week months month years year miles mile "
    "km kms blocks block times vez vezes veces horas hora minutos minuto dias dia semanas "
    "semana meses mes anos ano metros metro meters quadras quadra cuadras cuadra reais dollars "
    "euros pesos percent porcento pessoas personas people items itens unidades units"
)
# A lone spelled number that is more often an article ("rua augusta um tempo").
AMBIGUOUS_NUMBERS = word_set("um uma un una uno one oh once dos meia")
# After a request for help these say with what ("preciso de ajuda com o pedido", "I have a
# question about my bill", "tengo un problema con la factura"): the request is the problem.
# Not "do" nor "a": they open the question or the problem ("I need some help do you...",
# "preciso resolver uma coisa a entrega atrasou").
HELP_WITH = word_set(
    "com with con no na nos nas num numa em en in on about sobre acerca for para pra pro por "
    "to de da del regarding referente re that que because porque pq pois since pelo pela"
)

# A parcel's whereabouts are not the customer's city ("stuck in Memphis", "retida na
# alfândega em Curitiba", "scanned in Memphis"), nor someone else's home ("meu filho mora
# em Curitiba", "my mom lives in Chicago"): any of these in the few words before the cue.
NOT_MINE = word_set(
    "stuck held sitting waiting warehouse hub customs scanned arrived shows passed package parcel"
    " parado parada preso presa retido retida centro alfandega passou chegou encomenda pacote"
    " atascado detenido aduana paquete llego paso mom mother dad father son daughter wife"
    " husband sister brother friend mae pai filho filha esposa marido irma irmao amigo amiga"
    " madre padre hijo hija hermana hermano mama papa lives mora vive agent atendente agente"
    " store loja tienda your sua seu suas seus su sus tu vossa vuestra their"
)

# Someone else's doing: "the amount you actually paid", "eles na verdade mandaram" is no
# customer correcting themself; nor is what is asked about ("what actually happened").
OTHERS = word_set(
    "you u they we he she it who that which voce voces vc vcs ele ela eles elas usted ustedes"
    " ellos ellas what how why where when"
)

# After these a "2" is "to": "ship it 2 High Street 681", "deliver 2 Oak Avenue".
SENT_WORDS = word_set(
    "it them ship send deliver mail post shipping sending delivering sent shipped"
)

# "cidade natal", "ciudad natal": the town one was born in, not Natal.
HOME_TOWN = word_set("natal")
